package sqs

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
)

// URLScheme is SQS's address scheme, sqs://QUEUE: a queue name alone (not
// a queue URL); connection settings are never part of it (issue 17).
type URLScheme struct{}

// Forms returns scheme sqs, sqs://QUEUE to read, sqs://QUEUE to publish.
func (URLScheme) Forms() broker.SchemeForms {
	return broker.SchemeForms{Scheme: "sqs", Read: "sqs://QUEUE", Publish: "sqs://QUEUE"}
}

// Parse reads sqs://QUEUE into an Address of Kind AddressQueue. A query, a
// fragment, credentials, a port or a path are refused.
func (URLScheme) Parse(raw string) (broker.Address, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return broker.Address{}, err
	}
	if u.Scheme != "sqs" {
		return broker.Address{}, fmt.Errorf("want sqs://QUEUE")
	}
	if u.RawQuery != "" || u.ForceQuery {
		return broker.Address{}, fmt.Errorf("an sqs:// URL takes no query (?%s): want sqs://QUEUE; connection settings are flags (--region, --endpoint, --profile)", u.RawQuery)
	}
	if u.Fragment != "" || u.User != nil || u.Port() != "" {
		return broker.Address{}, fmt.Errorf("want sqs://QUEUE, a queue name alone")
	}
	name := strings.TrimSuffix(strings.TrimPrefix(u.Host+u.Path, "/"), "/")
	if name == "" {
		return broker.Address{}, fmt.Errorf("names no queue: want sqs://QUEUE")
	}
	if strings.Contains(name, "/") {
		return broker.Address{}, fmt.Errorf("want sqs://QUEUE, a queue name (not a queue URL)")
	}
	return broker.Address{Kind: broker.AddressQueue, Name: name}, nil
}

// Format prints sqs://QUEUE.
func (URLScheme) Format(a broker.Address) string { return "sqs://" + a.Name }

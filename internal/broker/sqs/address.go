package sqs

import (
	"fmt"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/config"
)

// URLScheme is SQS's address scheme, sqs://QUEUE: a queue name alone (not
// a queue URL); connection settings are never part of it.
type URLScheme struct{}

// Parse reads sqs://QUEUE into an Address of Kind AddressQueue, FIFO when
// QUEUE ends in .fifo (as SQS requires of a FIFO queue's name). A query, a
// fragment, credentials, a port, a path or a QUEUE that breaks SQS's name
// rule (config.SQSQueueNameRule: over 80 characters, say, which is
// refused, never cut) are refused.
func (URLScheme) Parse(raw string) (broker.Address, error) {
	u, err := broker.ParseURL(raw, "sqs", "sqs://QUEUE")
	if err != nil {
		return broker.Address{}, err
	}
	if u.RawQuery != "" || u.ForceQuery {
		q := u.RawQuery
		if u.Fragment != "" {
			q += "#" + u.Fragment
		}
		return broker.Address{}, broker.RefuseQuery("an sqs:// URL", q, ": want sqs://QUEUE; connection settings are flags (--region, --endpoint, --profile)")
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
	fifo := strings.HasSuffix(name, fifoSuffix)
	if rule := config.SQSQueueNameRule(name, fifo); rule != "" {
		return broker.Address{}, fmt.Errorf("want sqs://QUEUE, a queue name: %s", rule)
	}
	return broker.Address{Kind: broker.AddressQueue, Name: name, FIFO: fifo}, nil
}

// Format prints sqs://QUEUE.
func (URLScheme) Format(a broker.Address) string { return "sqs://" + a.Name }

// PublishName returns a queue (or SNS topic) name as it is, and the queue
// an sqs://QUEUE URL names. When from's Kind is AddressTopic the replay
// publishes to SNS topics, which no sqs:// URL names: a URL is refused.
func (s URLScheme) PublishName(to string, from broker.Address) (string, error) {
	if from.Kind == broker.AddressTopic && strings.Contains(to, "://") {
		return "", fmt.Errorf("replays from %s are published to SNS topics, and an sqs:// URL names a queue: give the topic's name", s.Format(from))
	}
	a, _, err := broker.ParsePublish(s, to)
	if err != nil {
		return "", err
	}
	return a.Name, nil
}

// Same reports whether name and self.Name are one queue once SQS naming
// applies (QueueName: dots become underscores, a FIFO name ends in .fifo;
// no name is cut), FIFO as self is. A replay through SNS is compared the
// same way: TopicName is QueueName.
func (URLScheme) Same(name string, self broker.Address) bool {
	return QueueName(name, self.FIFO) == QueueName(self.Name, self.FIFO)
}

// Forms returns scheme sqs, sqs://QUEUE to read, sqs://QUEUE to publish.
func (URLScheme) Forms() broker.SchemeForms {
	return broker.SchemeForms{Scheme: "sqs", Read: "sqs://QUEUE", Publish: "sqs://QUEUE"}
}

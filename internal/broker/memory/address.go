package memory

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
)

// URLScheme is the in-memory transport's address scheme,
// memory://QUEUE?file=PATH: a queue of a memory.output file (issue 17).
type URLScheme struct{}

// Forms returns scheme memory, memory://QUEUE?file=PATH to read, memory://QUEUE to publish.
func (URLScheme) Forms() broker.SchemeForms {
	return broker.SchemeForms{Scheme: "memory", Read: "memory://QUEUE?file=PATH", Publish: "memory://QUEUE"}
}

// Parse reads memory://QUEUE?file=PATH into an Address of Kind
// AddressQueue with the file, when given, in Params; any other query
// parameter is refused.
func (URLScheme) Parse(raw string) (broker.Address, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return broker.Address{}, err
	}
	q := u.Query()
	if err := broker.CheckParams(q, "memory", "file", "file=PATH"); err != nil {
		return broker.Address{}, err
	}
	queue := strings.TrimPrefix(u.Host+u.Path, "/")
	if queue == "" {
		return broker.Address{}, fmt.Errorf("names no queue: want memory://QUEUE?file=PATH")
	}
	return broker.Address{Kind: broker.AddressQueue, Name: queue, Params: q}, nil
}

// Format prints memory://QUEUE, with ?file= when Params has one.
func (URLScheme) Format(a broker.Address) string {
	s := "memory://" + a.Name
	if f := a.Params.Get("file"); f != "" {
		s += "?file=" + url.QueryEscape(f)
	}
	return s
}

package memory

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
)

// fileParam is the query parameter of a memory:// URL naming its file.
const fileParam = "file"

// URLScheme is the in-memory transport's address scheme,
// memory://QUEUE?file=PATH: a queue of a memory.output file.
type URLScheme struct{}

// Parse reads memory://QUEUE?file=PATH into an Address of Kind
// AddressQueue with the file, when given, in Params; any other query
// parameter is refused.
func (URLScheme) Parse(raw string) (broker.Address, error) {
	u, err := broker.ParseURL(raw, "memory", "memory://QUEUE?file=PATH")
	if err == nil {
		err = broker.CheckParams(u.Query(), "memory", fileParam, "file=PATH")
	}
	if err != nil {
		return broker.Address{}, err
	}
	queue := strings.TrimPrefix(u.Host+u.Path, "/")
	if queue == "" {
		return broker.Address{}, fmt.Errorf("names no queue: want memory://QUEUE?file=PATH")
	}
	return broker.Address{Kind: broker.AddressQueue, Name: queue, Params: u.Query()}, nil
}

// Format prints memory://QUEUE, with ?file= when Params has one.
func (URLScheme) Format(a broker.Address) string {
	return broker.FormatURL("memory", a.Name, fileParam, a.Params.Get(fileParam))
}

// PublishName returns a queue name as it is, and the queue a
// memory://QUEUE URL names. A replay writes into the file it reads
// (from's Params file): a URL whose ?file= is another file is refused.
func (s URLScheme) PublishName(to string, from broker.Address) (string, error) {
	a, isURL, err := broker.ParsePublish(s, to)
	if err != nil {
		return "", err
	}
	if file, read := a.Params.Get(fileParam), from.Params.Get(fileParam); isURL && file != "" && filepath.Clean(file) != filepath.Clean(read) {
		return "", fmt.Errorf("a replay writes only into the file it reads (%s)", read)
	}
	return a.Name, nil
}

// Same reports whether name is self's queue: queues are named as they are
// written.
func (URLScheme) Same(name string, self broker.Address) bool { return name == self.Name }

// Forms returns scheme memory, memory://QUEUE?file=PATH to read, memory://QUEUE to publish.
func (URLScheme) Forms() broker.SchemeForms {
	return broker.SchemeForms{Scheme: "memory", Read: "memory://QUEUE?file=PATH", Publish: "memory://QUEUE"}
}

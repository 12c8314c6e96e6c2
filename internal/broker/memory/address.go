package memory

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
)

// fileParam is the query parameter of a memory:// URL naming its file.
const fileParam = "file"

// URLScheme is the in-memory transport's address scheme,
// memory://QUEUE?file=PATH: a queue of a memory.output file.
//
// PATH is a file path, not form data: it is read as written, a "+" is
// a plus sign (never a space) and everything after "?file=" is the path
// ("#" and ";" included), so memory://q?file=dead+letters.jsonl reads the
// file dead+letters.jsonl. Percent-escapes are decoded (%2B is "+", %20
// and a literal space are both a space, %25 is "%"); a "%" that does not
// start an escape is refused, and "&" separates parameters (write it %26).
type URLScheme struct{}

// Parse reads memory://QUEUE?file=PATH into an Address of Kind
// AddressQueue with the file, when given, in Params (decoded as the
// scheme's doc says); any other query parameter, or a malformed
// percent-escape, is refused.
func (URLScheme) Parse(raw string) (broker.Address, error) {
	u, err := broker.ParseURL(raw, "memory", "memory://QUEUE?file=PATH")
	if err != nil {
		return broker.Address{}, err
	}
	// The query as written, a "#" in it included: url.Parse would take
	// the rest of a path holding "#" for a fragment.
	_, rawQuery, _, err := broker.SplitURL(raw, "memory", "memory://QUEUE?file=PATH")
	if err != nil {
		return broker.Address{}, err
	}
	params, err := pathQuery(rawQuery)
	if err == nil {
		err = broker.CheckParams(params, "memory", fileParam, "file=PATH")
	}
	if err != nil {
		return broker.Address{}, err
	}
	queue := strings.TrimPrefix(u.Host+u.Path, "/")
	if queue == "" {
		return broker.Address{}, fmt.Errorf("names no queue: want memory://QUEUE?file=PATH")
	}
	return broker.Address{Kind: broker.AddressQueue, Name: queue, Params: params}, nil
}

// pathQuery splits a raw query at "&" into its parameters, each name and
// value percent-decoded as a path is (url.PathUnescape: "+" stays a plus
// sign), unlike url.ParseQuery, which reads "+" as a space and drops a
// parameter with a malformed escape without a word.
func pathQuery(raw string) (url.Values, error) {
	params := url.Values{}
	if raw == "" {
		return params, nil
	}
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		// The errors quote no value: a query's values are redacted where
		// a URL is shown (broker.RefuseQuery).
		key, err := url.PathUnescape(k)
		if err != nil {
			return nil, errors.New(`a query parameter's name holds a "%" that starts no escape (write a "%" as %25)`)
		}
		value, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf(`query parameter %q holds a "%%" that starts no escape (write a "%%" as %%25)`, key)
		}
		params.Add(key, value)
	}
	return params, nil
}

// Format prints memory://QUEUE, with ?file= when Params has one: the path
// escaped so that Parse reads it back as it is ("/" and "+" kept as
// written, a space as %20).
func (URLScheme) Format(a broker.Address) string {
	s := "memory://" + a.Name
	if file := a.Params.Get(fileParam); file != "" {
		// Escaped as a path ("/" and "+" kept, a space %20), and "&",
		// which would end the parameter, as %26.
		escaped := (&url.URL{Path: file}).EscapedPath()
		s += "?" + fileParam + "=" + strings.ReplaceAll(escaped, "&", "%26")
	}
	return s
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

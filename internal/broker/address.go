package broker

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/brightergo/brighter/internal/redact"
)

// Address is a destination named by URL in one transport's own scheme:
// sqs://QUEUE, pubsub://projects/P/subscriptions/S (or topics/T),
// rocketmq://TOPIC?group=G, memory://QUEUE?file=PATH. It is what `brighter
// dlq` reads and replays to when no subscriptions file names it (each
// transport package owns its scheme).
type Address struct {
	// Project is the Pub/Sub project; "" for the other transports.
	Project string
	// Kind says what Name names: AddressQueue, AddressTopic or
	// AddressSubscription.
	Kind string
	// Name is the queue, topic or subscription id, unescaped.
	Name string
	// FIFO marks an SQS FIFO queue, whose name on the broker ends in .fifo
	// however a subscriptions file writes it; false for the other
	// transports.
	FIFO bool
	// Params are the query parameters the scheme allows (rocketmq: group;
	// memory: file); empty when none were given.
	Params url.Values
}

// The kinds of destination an Address names.
const (
	AddressQueue        = "queue"
	AddressTopic        = "topic"
	AddressSubscription = "subscription"
)

// AddressScheme is one transport's URL scheme and naming rules: it parses
// and prints the transport's addresses, says which forms it takes, and
// resolves names as the transport's producer does. Each transport package
// has one (sqs.URLScheme, gcp.URLScheme, rocketmq.URLScheme,
// memory.URLScheme); implementations are stateless.
type AddressScheme interface {
	// Forms names the scheme and the forms of its URLs.
	Forms() SchemeForms
	// Parse reads raw, a URL of this scheme. It refuses, with an error
	// saying what the scheme takes, anything the scheme cannot carry
	// rather than ignoring it.
	Parse(raw string) (Address, error)
	// Format prints a as a URL of this scheme; Parse(Format(a)) is a for
	// every a Parse returns.
	Format(a Address) string
	// PublishName resolves to, where a replay reading from is told to
	// publish (a name as a subscriptions file writes it, or a URL of this
	// scheme), into the name the transport's producer publishes to. from
	// is the destination read, as that producer names destinations: its
	// Kind is what the producer publishes to (SQS through SNS:
	// AddressTopic), its Project, FIFO and Params the reader's. An empty
	// to, a URL of another scheme, and a URL naming what such a publish
	// cannot reach (a subscription, a consumer group, another file, a
	// queue when the replay publishes to topics) are refused, saying what
	// the scheme takes.
	PublishName(to string, from Address) (string, error)
	// Same reports whether name, as PublishName returns it, names the
	// destination self (a from of PublishName) once the transport has
	// applied its naming rules (SQS: dots become underscores, a FIFO name
	// ends in .fifo, names are cut at the broker's length limit; Pub/Sub:
	// a topic id is the topic of self's project).
	Same(name string, self Address) bool
}

// SchemeForms names a URL scheme and the forms of its URLs, for messages.
type SchemeForms struct {
	// Scheme is the URL scheme without "://" ("sqs", "pubsub", ...).
	Scheme string
	// Read is the form of a URL naming a destination to read
	// ("pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION").
	Read string
	// Publish is the form of a URL naming a destination to publish to
	// ("pubsub://projects/PROJECT/topics/TOPIC").
	Publish string
}

// CheckParams refuses a query parameter of q other than allowed, naming
// the one URL form the scheme takes (as "a memory:// URL takes only
// ?file=PATH"); schemes call it from Parse.
func CheckParams(q url.Values, scheme, allowed, form string) error {
	for k := range q {
		if k != allowed {
			return fmt.Errorf("unknown query parameter %q: a %s:// URL takes only ?%s", k, scheme, form)
		}
	}
	return nil
}

// RefuseQuery is the error of a scheme whose URLs take no query: what (as
// "an sqs:// URL"), "takes no query (?QUERY)" and hint. query is the raw
// text after the "?" (a fragment included); it is shown with its values and
// fragment redacted (internal/redact), so the parameter names
// tell the reader what was sent while a token in a value is never printed.
func RefuseQuery(what, query, hint string) error {
	return fmt.Errorf("%s takes no query (%s)%s", what, redact.URL("?"+query), hint)
}

// SplitURL splits raw, a URL of scheme, at its first "?" into the path
// behind "scheme://" (its slashes trimmed at both ends, not unescaped) and
// the raw query; hasQuery says whether there was a "?". A raw of another
// scheme is refused, naming want, the form the scheme takes.
func SplitURL(raw, scheme, want string) (path, query string, hasQuery bool, err error) {
	rest, ok := strings.CutPrefix(raw, scheme+"://")
	if !ok {
		return "", "", false, fmt.Errorf("not a %s:// URL: want %s", scheme, want)
	}
	rest, query, hasQuery = strings.Cut(rest, "?")
	return strings.Trim(rest, "/"), query, hasQuery, nil
}

// ParseURL parses raw with net/url, refusing a URL of a scheme other than
// scheme with "want " and want, the form the scheme takes.
func ParseURL(raw, scheme, want string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != scheme {
		return nil, fmt.Errorf("want %s", want)
	}
	return u, nil
}

// FormatURL prints scheme://name, followed by ?key=VALUE (VALUE
// query-escaped) when value is not empty.
func FormatURL(scheme, name, key, value string) string {
	s := scheme + "://" + name
	if value != "" {
		s += "?" + key + "=" + url.QueryEscape(value)
	}
	return s
}

// ParsePublish is how a scheme's PublishName reads to: an empty (or
// blank) to is refused; a to without "://" is a name, returned as
// Address{Name: to} with isURL false; anything else is parsed by as (isURL
// true).
func ParsePublish(as AddressScheme, to string) (a Address, isURL bool, err error) {
	switch {
	case strings.TrimSpace(to) == "":
		return Address{}, false, errors.New("names no destination: give a topic or queue name, or a URL")
	case !strings.Contains(to, "://"):
		return Address{Name: to}, false, nil
	}
	a, err = as.Parse(to)
	return a, true, err
}

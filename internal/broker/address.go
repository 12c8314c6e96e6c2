package broker

import (
	"fmt"
	"net/url"
)

// Address is a destination named by URL in one transport's own scheme:
// sqs://QUEUE, pubsub://projects/P/subscriptions/S (or topics/T),
// rocketmq://TOPIC?group=G, memory://QUEUE?file=PATH. It is what `brighter
// dlq` reads and replays to when no subscriptions file names it (issue 17:
// each transport package owns its scheme).
type Address struct {
	// Project is the Pub/Sub project; "" for the other transports.
	Project string
	// Kind says what Name names: AddressQueue, AddressTopic or
	// AddressSubscription.
	Kind string
	// Name is the queue, topic or subscription id, unescaped.
	Name string
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

// AddressScheme is one transport's URL scheme: it parses and prints the
// transport's addresses and says which forms it takes. Each transport
// package has one (sqs.URLScheme, gcp.URLScheme, rocketmq.URLScheme,
// memory.URLScheme); implementations are stateless.
type AddressScheme interface {
	// Forms names the scheme and the forms of its URLs.
	Forms() SchemeForms
	// Parse reads raw, a URL of this scheme. It refuses, with an error
	// saying what the scheme takes, anything the scheme cannot carry
	// rather than ignoring it.
	Parse(raw string) (Address, error)
	// Format prints a as a URL of this scheme; Parse(Format(a)) is a.
	Format(a Address) string
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

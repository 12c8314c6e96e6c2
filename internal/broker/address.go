package broker

import "net/url"

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
	// Scheme is the URL scheme without "://" ("sqs", "pubsub", ...).
	Scheme() string
	// ReadForm is the form of a URL naming a destination to read, for
	// messages ("pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION").
	ReadForm() string
	// PublishForm is the form of a URL naming a destination to publish to
	// ("pubsub://projects/PROJECT/topics/TOPIC").
	PublishForm() string
	// Parse reads raw, a URL of this scheme. It refuses, with an error
	// saying what the scheme takes, anything the scheme cannot carry
	// rather than ignoring it.
	Parse(raw string) (Address, error)
	// Format prints a as a URL of this scheme; Parse(Format(a)) is a.
	Format(a Address) string
}

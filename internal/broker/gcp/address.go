package gcp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
)

// errNotPubSub is Parse's error for a URL of another shape.
var errNotPubSub = errors.New("not a pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION or pubsub://projects/PROJECT/topics/TOPIC URL")

// URLScheme is Pub/Sub's address scheme: pubsub://projects/P/subscriptions/S
// to read, pubsub://projects/P/topics/T to publish, the resource's full
// name behind pubsub://.
type URLScheme struct{}

// Parse reads pubsub://projects/P/subscriptions/S (Kind
// AddressSubscription) or pubsub://projects/P/topics/T (AddressTopic). A
// query is refused: the emulator is a connection setting.
func (URLScheme) Parse(raw string) (broker.Address, error) {
	path, query, hasQuery, err := broker.SplitURL(raw, "pubsub", "pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION")
	if err != nil {
		return broker.Address{}, errNotPubSub
	}
	if hasQuery {
		return broker.Address{}, broker.RefuseQuery("a pubsub:// URL", query, "; the emulator is --endpoint or PUBSUB_EMULATOR_HOST")
	}
	parts := strings.Split(path, "/")
	if len(parts) != 4 || parts[0] != "projects" || parts[1] == "" || parts[3] == "" || (parts[2] != "subscriptions" && parts[2] != "topics") {
		return broker.Address{}, errNotPubSub
	}
	kind := broker.AddressSubscription
	if parts[2] == "topics" {
		kind = broker.AddressTopic
	}
	return broker.Address{Project: parts[1], Kind: kind, Name: parts[3]}, nil
}

// Format prints pubsub://projects/P/subscriptions/S or
// pubsub://projects/P/topics/T; a Name that is already a full name
// (projects/...) is printed behind pubsub:// as it is.
func (URLScheme) Format(a broker.Address) string {
	if a.Kind == broker.AddressTopic {
		return "pubsub://" + topicName(a.Project, a.Name)
	}
	return "pubsub://" + SubscriptionName(a.Project, a.Name)
}

// PublishName returns a topic id or full name (projects/P/topics/T) as it
// is, and the topic a pubsub://projects/P/topics/T URL names: its id when
// P is from's project, else its full name. A subscription's URL is
// refused: a replay publishes to a topic.
func (s URLScheme) PublishName(to string, from broker.Address) (string, error) {
	a, isURL, err := broker.ParsePublish(s, to)
	switch {
	case err != nil:
		return "", err
	case !isURL:
		return a.Name, nil
	case a.Kind != broker.AddressTopic:
		return "", fmt.Errorf("a replay publishes to a topic: want %s", s.Forms().Publish)
	case a.Project == from.Project:
		return a.Name, nil
	}
	return topicName(a.Project, a.Name), nil
}

// Same reports whether name and self.Name, each a topic id of self's
// project or a full name, are one topic.
func (URLScheme) Same(name string, self broker.Address) bool {
	return topicName(self.Project, name) == topicName(self.Project, self.Name)
}

// Forms returns scheme pubsub, pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION to read, pubsub://projects/PROJECT/topics/TOPIC to publish.
func (URLScheme) Forms() broker.SchemeForms {
	return broker.SchemeForms{Scheme: "pubsub", Read: "pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION", Publish: "pubsub://projects/PROJECT/topics/TOPIC"}
}

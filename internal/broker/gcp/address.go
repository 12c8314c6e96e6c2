package gcp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
)

// URLScheme is Pub/Sub's address scheme: pubsub://projects/P/subscriptions/S
// to read, pubsub://projects/P/topics/T to publish, the resource's full
// name behind pubsub:// (issue 17).
type URLScheme struct{}

// Forms returns scheme pubsub, pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION to read, pubsub://projects/PROJECT/topics/TOPIC to publish.
func (URLScheme) Forms() broker.SchemeForms {
	return broker.SchemeForms{Scheme: "pubsub", Read: "pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION", Publish: "pubsub://projects/PROJECT/topics/TOPIC"}
}

// Parse reads pubsub://projects/P/subscriptions/S (Kind
// AddressSubscription) or pubsub://projects/P/topics/T (AddressTopic). A
// query is refused: the emulator is a connection setting.
func (URLScheme) Parse(raw string) (broker.Address, error) {
	rest := strings.TrimPrefix(raw, "pubsub://")
	rest, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery {
		return broker.Address{}, fmt.Errorf("a pubsub:// URL takes no query (?%s); the emulator is --endpoint or PUBSUB_EMULATOR_HOST", query)
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if len(parts) != 4 || parts[0] != "projects" || parts[1] == "" || parts[3] == "" || (parts[2] != "subscriptions" && parts[2] != "topics") {
		return broker.Address{}, errors.New("not a pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION or pubsub://projects/PROJECT/topics/TOPIC URL")
	}
	kind := broker.AddressSubscription
	if parts[2] == "topics" {
		kind = broker.AddressTopic
	}
	return broker.Address{Project: parts[1], Kind: kind, Name: parts[3]}, nil
}

// Format prints pubsub://projects/P/subscriptions/S or
// pubsub://projects/P/topics/T.
func (URLScheme) Format(a broker.Address) string {
	kind := "subscriptions"
	if a.Kind == broker.AddressTopic {
		kind = "topics"
	}
	return "pubsub://projects/" + a.Project + "/" + kind + "/" + a.Name
}

package rocketmq

import (
	"errors"
	"net/url"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
)

// URLScheme is RocketMQ's address scheme, rocketmq://TOPIC?group=GROUP
// (the group a reader reads in; a publish takes none). TOPIC may be written
// raw (%DLQ%orders) or escaped (%25DLQ%25orders) (issue 17).
type URLScheme struct{}

// Forms returns scheme rocketmq, rocketmq://TOPIC?group=GROUP to read, rocketmq://TOPIC to publish.
func (URLScheme) Forms() broker.SchemeForms {
	return broker.SchemeForms{Scheme: "rocketmq", Read: "rocketmq://TOPIC?group=GROUP", Publish: "rocketmq://TOPIC"}
}

// Parse reads rocketmq://TOPIC?group=G into an Address of Kind
// AddressTopic with the group, when given, in Params; any other query
// parameter is refused.
func (URLScheme) Parse(raw string) (broker.Address, error) {
	rest := strings.TrimPrefix(raw, "rocketmq://")
	rawTopic, query, _ := strings.Cut(rest, "?")
	topic := strings.Trim(rawTopic, "/")
	if un, err := url.PathUnescape(topic); err == nil && !strings.Contains(topic, "%DLQ%") {
		topic = un
	}
	if topic == "" {
		return broker.Address{}, errors.New("names no topic: want rocketmq://TOPIC?group=GROUP")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return broker.Address{}, err
	}
	if err := broker.CheckParams(q, "rocketmq", "group", "group=GROUP"); err != nil {
		return broker.Address{}, err
	}
	return broker.Address{Kind: broker.AddressTopic, Name: topic, Params: q}, nil
}

// Format prints rocketmq://TOPIC, with ?group= when Params has one.
func (URLScheme) Format(a broker.Address) string {
	s := "rocketmq://" + a.Name
	if g := a.Params.Get("group"); g != "" {
		s += "?group=" + url.QueryEscape(g)
	}
	return s
}

package rocketmq

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/redact"
)

// dlqPrefix begins the name of a consumer group's dead-letter topic.
const dlqPrefix = "%DLQ%"

// DLQTopic is the topic RocketMQ moves a message to once consumer group's
// retries of it run out: %DLQ%GROUP.
func DLQTopic(group string) string { return dlqPrefix + group }

// URLScheme is RocketMQ's address scheme, rocketmq://TOPIC?group=GROUP
// (the group a reader reads in; a publish takes none). TOPIC may be written
// raw (%DLQ%orders) or escaped (%25DLQ%25orders).
type URLScheme struct{}

// Parse reads rocketmq://TOPIC?group=G into an Address of Kind
// AddressTopic with the group, when given, in Params; any other query
// parameter is refused.
func (URLScheme) Parse(raw string) (broker.Address, error) {
	topic, query, _, err := broker.SplitURL(raw, "rocketmq", "rocketmq://TOPIC?group=GROUP")
	if err != nil {
		return broker.Address{}, err
	}
	if un, err := url.PathUnescape(topic); err == nil && !strings.Contains(topic, dlqPrefix) {
		topic = un
	}
	if topic == "" {
		return broker.Address{}, errors.New("names no topic: want rocketmq://TOPIC?group=GROUP")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		// url's error quotes the bad escape, a piece of a value: the
		// query is shown redacted instead.
		return broker.Address{}, fmt.Errorf("a rocketmq:// URL's query (%s) does not parse: want rocketmq://TOPIC?group=GROUP", redact.URL("?"+query))
	}
	if err := broker.CheckParams(q, "rocketmq", "group", "group=GROUP"); err != nil {
		return broker.Address{}, err
	}
	return broker.Address{Kind: broker.AddressTopic, Name: topic, Params: q}, nil
}

// Format prints rocketmq://TOPIC, with ?group= when Params has one.
func (URLScheme) Format(a broker.Address) string {
	return broker.FormatURL("rocketmq", a.Name, "group", a.Params.Get("group"))
}

// PublishName returns a topic name as it is, and the topic a
// rocketmq://TOPIC URL names, unescaped; a URL with ?group= is refused: a
// publish has no consumer group.
func (s URLScheme) PublishName(to string, _ broker.Address) (string, error) {
	a, isURL, err := broker.ParsePublish(s, to)
	if err == nil && isURL && len(a.Params) > 0 {
		err = fmt.Errorf("a publish has no consumer group: want %s", s.Forms().Publish)
	}
	if err != nil {
		return "", err
	}
	return a.Name, nil
}

// Same reports whether name is self's topic: RocketMQ names a topic as it
// is written.
func (URLScheme) Same(name string, self broker.Address) bool { return name == self.Name }

// Forms returns scheme rocketmq, rocketmq://TOPIC?group=GROUP to read, rocketmq://TOPIC to publish.
func (URLScheme) Forms() broker.SchemeForms {
	return broker.SchemeForms{Scheme: "rocketmq", Read: "rocketmq://TOPIC?group=GROUP", Publish: "rocketmq://TOPIC"}
}

package config

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name rules of each broker (docs/configuration.md "Limits").
// A name that breaks its broker's rule is an error naming the rule, instead
// of a name the transport would silently cut (SQS's 80 characters) or a
// broker call that fails at start-up.
const (
	// maxSQSQueueName is SQS's queue-name limit, ".fifo" included.
	maxSQSQueueName = 80
	// maxSNSTopicName is SNS's topic-name limit, ".fifo" included.
	maxSNSTopicName = 256
	// maxPubSubName is Pub/Sub's topic and subscription id limit.
	maxPubSubName = 255
	// minPubSubName is Pub/Sub's shortest topic or subscription id.
	minPubSubName = 3
	// maxRocketMQTopic is RocketMQ's topic-name limit.
	maxRocketMQTopic = 127
	// maxRocketMQGroup is RocketMQ's consumer-group-name limit.
	maxRocketMQGroup = 255
	// maxName bounds every other name (a subscription's name, a memory
	// queue): it appears in logs, metrics labels and file names.
	maxName = 255
)

// sqsNameRule checks a channel or routing key that becomes an SQS queue
// (queue true) or SNS topic name the way Brighter forms it: '.' becomes
// '_', and a FIFO name ends in ".fifo" (a name already ending in "fifo"
// loses its last five characters first).
func sqsNameRule(name string, queue, fifo bool) string {
	limit, kind := maxSQSQueueName, "an SQS queue name"
	if !queue {
		limit, kind = maxSNSTopicName, "an SNS topic name"
	}
	for _, r := range name {
		if !(r < utf8.RuneSelf && (isAlnum(byte(r)) || r == '-' || r == '_' || r == '.')) {
			return fmt.Sprintf("%s may hold only letters, digits, '-', '_' and '.' (which becomes '_'); %s is not allowed", kind, describeRune(r))
		}
	}
	n := len(name)
	if fifo {
		if strings.HasSuffix(name, "fifo") && n >= 5 {
			n -= 5
		}
		n += len(".fifo")
	}
	if n > limit {
		extra := ""
		if fifo {
			extra = ` with ".fifo"`
		}
		return fmt.Sprintf("%s is at most %d characters%s; this one would be %d (brighter does not cut names short)", kind, limit, extra, n)
	}
	return ""
}

// pubsubNameRule checks a Pub/Sub topic or subscription id.
func pubsubNameRule(name string) string {
	const kind = "a Pub/Sub topic or subscription id"
	if n := utf8.RuneCountInString(name); n < minPubSubName || n > maxPubSubName {
		return fmt.Sprintf("%s is %d to %d characters; this one is %d", kind, minPubSubName, maxPubSubName, n)
	}
	if c := name[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return fmt.Sprintf("%s starts with a letter", kind)
	}
	if strings.HasPrefix(strings.ToLower(name), "goog") {
		return fmt.Sprintf(`%s must not start with "goog"`, kind)
	}
	for _, r := range name {
		if !(r < utf8.RuneSelf && (isAlnum(byte(r)) || strings.ContainsRune("-_.~+%", r))) {
			return fmt.Sprintf("%s may hold only letters, digits and - _ . ~ + %%; %s is not allowed", kind, describeRune(r))
		}
	}
	return ""
}

// rocketmqNameRule checks a RocketMQ topic (group false) or consumer group.
func rocketmqNameRule(name string, group bool) string {
	limit, kind := maxRocketMQTopic, "a RocketMQ topic"
	if group {
		limit, kind = maxRocketMQGroup, "a RocketMQ consumer group"
	}
	for _, r := range name {
		if !(r < utf8.RuneSelf && (isAlnum(byte(r)) || r == '-' || r == '_' || r == '%' || r == '|')) {
			return fmt.Sprintf("%s may hold only letters, digits, '-', '_', '%%' and '|'; %s is not allowed", kind, describeRune(r))
		}
	}
	if len(name) > limit {
		return fmt.Sprintf("%s is at most %d characters; this one is %d", kind, limit, len(name))
	}
	return ""
}

// plainNameRule checks any other name: valid UTF-8, no control character
// (NUL included), at most maxName characters.
func plainNameRule(name string) string {
	if !utf8.ValidString(name) {
		return "a name must be valid UTF-8 text"
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Sprintf("a name must not hold a control character; %s is not allowed", describeRune(r))
		}
	}
	if n := utf8.RuneCountInString(name); n > maxName {
		return fmt.Sprintf("a name is at most %d characters; this one is %d", maxName, n)
	}
	return ""
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// describeRune names r for an error: the character quoted, or its code
// point when it is not printable.
func describeRune(r rune) string {
	if r == utf8.RuneError {
		return "a byte that is not UTF-8"
	}
	if unicode.IsPrint(r) {
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("%U", r)
}

// SQSQueueNameRule says why name (a channel name or routing key, as
// written) cannot become an SQS queue name, or "" when it can: the
// characters SQS takes, and at most 80 characters once '.' is '_' and a
// FIFO name (fifo true) ends in ".fifo". Brighter never cuts a longer name
// short: every place that takes a queue name refuses it with this rule.
func SQSQueueNameRule(name string, fifo bool) string { return sqsNameRule(name, true, fifo) }

// SNSTopicNameRule is SQSQueueNameRule for an SNS topic name: at most 256
// characters.
func SNSTopicNameRule(name string, fifo bool) string { return sqsNameRule(name, false, fifo) }

// TopicNameRule says why name cannot be a topic a message for s is
// published to (send --topic) on s's transport, or "" when it can: the
// rule the subscriptions file holds s's routingKey to (on SQS, an SNS
// topic's rule for a pubSub channel and a queue's for a pointToPoint one,
// whose routingKey names the queue messages are sent to; on RocketMQ,
// whose routingKey names no topic of its own, a topic's rule, as
// channelName's).
func (s *Subscription) TopicNameRule(name string) string {
	switch s.Transport {
	case TransportSQS:
		fifo := s.SQS != nil && s.SQS.QueueType == QueueFIFO
		if s.SQS != nil && s.SQS.ChannelType == ChannelPubSub {
			return SNSTopicNameRule(name, fifo)
		}
		return SQSQueueNameRule(name, fifo)
	case TransportGCP:
		return pubsubNameRule(name)
	case TransportRocketMQ:
		return rocketmqNameRule(name, false)
	}
	return plainNameRule(name)
}

// checkNames applies the broker's name rules to s's names (after defaults,
// so a channelName taken from name is checked too). Each problem is
// reported at the field that set the name, or at the field it defaulted
// from.
func (d *decoder) checkNames(s *Subscription) {
	seen := map[string]bool{}
	check := func(field, value, rule string) {
		if rule == "" || value == "" || seen[value] {
			return // one report per name: channelName and routingKey often share it
		}
		seen[value] = true
		at, from := s.Pos(field), field
		if !s.Set(field) {
			for _, f := range []string{"routingKey", "channelName", "name"} {
				if s.Set(f) {
					at, from = s.Pos(f), f
					break
				}
			}
		}
		// The value is quoted as the field that set it has it.
		d.errAt(at, s.Path()+"."+field, "%q: %s", shorten(d.writtenAt(s.Path()+"."+from, value)), rule)
	}
	check("name", s.Name, plainNameRule(s.Name))
	switch s.Transport {
	case TransportSQS:
		fifo := s.SQS != nil && s.SQS.QueueType == QueueFIFO
		check("channelName", s.ChannelName, sqsNameRule(s.ChannelName, true, fifo))
		check("routingKey", s.RoutingKey, s.TopicNameRule(s.RoutingKey))
		check("deadLetterRoutingKey", s.DeadLetterRoutingKey, sqsNameRule(s.DeadLetterRoutingKey, true, fifo))
		check("invalidMessageRoutingKey", s.InvalidMessageRoutingKey, sqsNameRule(s.InvalidMessageRoutingKey, true, fifo))
		if s.SQS != nil && s.SQS.RedrivePolicy != nil {
			q := s.SQS.RedrivePolicy.DeadLetterQueue
			check("sqs.redrivePolicy.deadLetterQueue", q, sqsNameRule(q, true, fifo))
		}
	case TransportGCP:
		for _, f := range []struct{ field, v string }{{"channelName", s.ChannelName}, {"routingKey", s.RoutingKey},
			{"deadLetterRoutingKey", s.DeadLetterRoutingKey}, {"invalidMessageRoutingKey", s.InvalidMessageRoutingKey}} {
			check(f.field, f.v, pubsubNameRule(f.v))
		}
		if s.GCP != nil && s.GCP.DeadLetterPolicy != nil {
			p := s.GCP.DeadLetterPolicy
			check("gcp.deadLetterPolicy.topic", p.Topic, pubsubNameRule(p.Topic))
			check("gcp.deadLetterPolicy.subscription", p.Subscription, pubsubNameRule(p.Subscription))
		}
	case TransportRocketMQ:
		for _, f := range []struct{ field, v string }{{"channelName", s.ChannelName},
			{"deadLetterRoutingKey", s.DeadLetterRoutingKey}, {"invalidMessageRoutingKey", s.InvalidMessageRoutingKey}} {
			check(f.field, f.v, rocketmqNameRule(f.v, false))
		}
		if s.RocketMQ != nil {
			check("rocketmq.consumerGroup", s.RocketMQ.ConsumerGroup, rocketmqNameRule(s.RocketMQ.ConsumerGroup, true))
		}
	default:
		for _, f := range []struct{ field, v string }{{"channelName", s.ChannelName}, {"routingKey", s.RoutingKey},
			{"deadLetterRoutingKey", s.DeadLetterRoutingKey}, {"invalidMessageRoutingKey", s.InvalidMessageRoutingKey}} {
			check(f.field, f.v, plainNameRule(f.v))
		}
	}
}

// shorten cuts a name for an error message to 60 bytes (a 1 MB name must
// not become a 1 MB error).
func shorten(s string) string {
	if len(s) <= 60 {
		return s
	}
	cut := 60
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d bytes)", len(s))
}

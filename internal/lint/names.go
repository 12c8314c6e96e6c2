package lint

import (
	"fmt"

	"github.com/brightergo/brighter/internal/config"
)

// ChannelKey is where a queue or topic name of a subscription on transport
// t lands, as the transport resolves names: on SQS Brighter's queue-name
// rule ('.' is '_', without a ".fifo" suffix), so that "lo.op" and "lo_op"
// are one key; elsewhere the name as written. Two names with one key are
// one queue or topic to the broker. Rules that compare a destination with
// a source (dead-letter-is-source, rejection-cycle,
// consumes-rejection-destination) compare keys.
func ChannelKey(t config.Transport, name string) string { return destKey(t, name) }

// sourceNamed reports whether name, a destination of s, is the
// subscription's channel or topic as the transport resolves names, and
// which (with the source as written when that differs from name).
func sourceNamed(s *config.Subscription, name string) (bool, string) {
	k := destKey(s.Transport, name)
	for _, src := range []struct{ field, value, what string }{
		{"channelName", s.ChannelName, "channel"},
		{"routingKey", s.RoutingKey, "topic"},
	} {
		if src.value == "" || destKey(s.Transport, src.value) != k {
			continue
		}
		if src.value == name {
			return true, fmt.Sprintf("%s (%s)", src.what, src.field)
		}
		return true, fmt.Sprintf("%s (%s %q: both name the %s %q to the broker)", src.what, src.field, src.value, transportNoun(s.Transport), k)
	}
	return false, ""
}

// transportNoun is what a transport's channels are called.
func transportNoun(t config.Transport) string {
	if t == config.TransportSQS {
		return "queue"
	}
	return "topic"
}

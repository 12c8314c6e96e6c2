package shared

import (
	"errors"
	"io/fs"
	"os"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/transport"
)

// dlq replay's allow-list (docs/security.md): without --to a
// message goes to the originalTopic written in it, which whoever can write
// to the dead-letter destination (or, on Pub/Sub, to the source topic, via
// the Topic attribute) controls. A replay without --to therefore publishes
// only to a destination the subscriptions file knows for the destination
// being read: the routingKey or channelName of a subscription whose
// dead-letter, invalid-message or native redrive destination it is, as the
// transport resolves names (broker.AddressScheme.Same).

// replayAllowList returns the names a replay from t may publish to without
// --to, and the decision function over a message's originalTopic. For a
// destination named by URL it reads the subscriptions file (-c) when there
// is one; without one the list is empty and every message is refused
// (unless --allow-any-destination). failed are those subscriptions, whose
// rejections t holds (the fan-out guard's failed subscriptions).
func (o *ReplayOptions) replayAllowList(t *transport.Target, dt transport.Transport) (names []string, allow func(string) bool, failed []*config.Subscription, err error) {
	f := t.F
	if f == nil || f.Path == commandLinePath {
		f = nil
		if _, err := os.Stat(o.ConfigPath); err == nil {
			if f, err = cmdutil.LoadConfig(o.IO, o.ConfigPath); err != nil {
				return nil, nil, nil, err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, cmdutil.UsageErr(err)
		}
	}
	o.noFile = f == nil
	as := dt.Addresses()
	from := dt.ReplayFrom(t)
	if f != nil {
		for _, s := range f.Subscriptions {
			if s.Transport != t.S.Transport || !readsRejectionsOf(as, from, s) {
				continue
			}
			failed = append(failed, s)
			for _, n := range []string{s.RoutingKey, s.ChannelName} {
				if n != "" && !as.Same(n, from) {
					names = append(names, n)
				}
			}
		}
	}
	allow = func(dest string) bool {
		for _, n := range names {
			if as.Same(dest, broker.Address{Project: from.Project, Kind: from.Kind, FIFO: from.FIFO, Params: from.Params, Name: n}) {
				return true
			}
		}
		return false
	}
	return names, allow, failed, nil
}

// noFileRefusal is why a replay without --to refuses every message when
// no subscriptions file was read: the allow-list is empty.
const noFileRefusal = "no subscriptions file was read, so no destination is allowed: give --to DEST, or -c FILE naming the subscriptions file whose dead-letter destination this is (or --allow-any-destination)"

// refusal is the words the replay's progress says of a refused message:
// noFileRefusal when no subscriptions file was read, else "" (the
// progress's own: not a destination the subscriptions file knows).
func (o *ReplayOptions) refusal() string {
	if o.noFile {
		return noFileRefusal
	}
	return ""
}

// readsRejectionsOf reports whether from, the destination a replay reads
// (as its producer names destinations), is one of s's rejection
// destinations: deadLetterRoutingKey, invalidMessageRoutingKey, or the
// broker's own redrive target.
func readsRejectionsOf(as broker.AddressScheme, from broker.Address, s *config.Subscription) bool {
	dests := []string{s.DeadLetterRoutingKey, s.InvalidMessageRoutingKey}
	switch {
	case s.SQS != nil && s.SQS.RedrivePolicy != nil:
		dests = append(dests, s.SQS.RedrivePolicy.DeadLetterQueue)
	case s.GCP != nil && s.GCP.DeadLetterPolicy != nil:
		dests = append(dests, s.GCP.DeadLetterPolicy.Topic)
	case s.RocketMQ != nil && s.RocketMQ.ConsumerGroup != "":
		dests = append(dests, rocketmq.DLQTopic(s.RocketMQ.ConsumerGroup))
	}
	for _, d := range dests {
		if d != "" && as.Same(d, from) {
			return true
		}
	}
	return false
}

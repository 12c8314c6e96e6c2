package shared

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

// Resolve turns the argument (a subscription name or a URL) into a target.
func (o *Options) Resolve(arg string) (*transport.Target, error) {
	if strings.TrimSpace(arg) == "" {
		return nil, cmdutil.UsageErr(errors.New("a subscription name or URL is required (SUBSCRIPTION, or sqs://QUEUE, pubsub://projects/P/subscriptions/S, rocketmq://TOPIC, memory://QUEUE?file=F)"))
	}
	if strings.Contains(arg, "://") {
		return o.resolveURL(arg)
	}
	if o.SNS {
		return nil, cmdutil.UsageErr(fmt.Errorf("--sns applies only to an sqs:// URL; subscription %s publishes replays as its channelType says", redact.Cut(arg)))
	}
	f, err := cmdutil.LoadConfig(o.IO, o.ConfigPath)
	if err != nil {
		return nil, err
	}
	s := f.Subscription(arg)
	if s == nil {
		if len(f.Subscriptions) == 0 {
			return nil, cmdutil.UsageErr(fmt.Errorf("no subscription %q in %s (it has none)", redact.Quoted(arg), redact.Cut(f.Path)))
		}
		known := make([]string, 0, len(f.Subscriptions))
		for _, s := range f.Subscriptions {
			known = append(known, s.Name)
		}
		return nil, cmdutil.UsageErr(fmt.Errorf("no subscription %q in %s (known: %s)", redact.Quoted(arg), redact.Cut(f.Path), strings.Join(known, ", ")))
	}
	t := &transport.Target{F: f, S: s}
	switch o.which() {
	case "invalid":
		t.Dest = s.InvalidMessageRoutingKey
		if t.Dest == "" {
			return nil, cmdutil.UsageErr(fmt.Errorf("%s: subscription %s has no invalidMessageRoutingKey: its unacceptable messages go to its dead-letter queue (use --dlq)", s.Pos("invalidMessageRoutingKey"), s.Name))
		}
	case "native":
		native, ok := nativeTarget(s)
		if !ok {
			return nil, cmdutil.UsageErr(fmt.Errorf("%s: subscription %s has no native redrive target (sqs.redrivePolicy, gcp.deadLetterPolicy)", s.Pos("transport"), s.Name))
		}
		t.Dest = native
	default:
		t.Dest = s.DeadLetterRoutingKey
		if t.Dest == "" {
			return nil, cmdutil.UsageErr(fmt.Errorf("%s: subscription %s has no deadLetterRoutingKey: its rejected messages are discarded, not dead-lettered (try --native)", s.Pos("deadLetterRoutingKey"), s.Name))
		}
	}
	t.URL = string(s.Transport) + "://" + t.Dest
	switch s.Transport {
	case config.TransportGCP:
		t.URL = gcp.URLScheme{}.Format(broker.Address{Project: transport.GCPProject(t), Kind: broker.AddressSubscription, Name: t.Dest})
	case config.TransportRocketMQ:
		t.Group = o.Group
		if t.Group == "" {
			t.Group = s.RocketMQ.ConsumerGroup + readerGroupSuffix
		}
		if t.Group == s.RocketMQ.ConsumerGroup {
			return nil, cmdutil.UsageErr(fmt.Errorf("--group %s: that is the subscription's own consumer group; dlq reads with a group of its own so it never takes messages from the consumers", redact.Cut(t.Group)))
		}
		t.URL = rocketmq.URLScheme{}.Format(broker.Address{Kind: broker.AddressTopic, Name: t.Dest, Params: url.Values{"group": {t.Group}}})
	}
	return t, nil
}

// readerGroupSuffix makes the default RocketMQ reader group of a
// subscription: CONSUMERGROUP-dlq-reader.
const readerGroupSuffix = "-dlq-reader"

// defaultURLReaderGroup is the RocketMQ reader group of a rocketmq:// URL
// without ?group= and without --group.
const defaultURLReaderGroup = transport.DefaultURLReaderGroup

// Env reads an environment variable through the command's IO streams.
func (o *Options) Env(name string) string {
	if o.IO.Getenv == nil {
		return ""
	}
	v, _ := o.IO.Getenv(name)
	return v
}

// dlqSchemeOrder is the order in which usage errors list the URL schemes.
var dlqSchemeOrder = []config.Transport{config.TransportSQS, config.TransportGCP, config.TransportRocketMQ, config.TransportMemory}

// scheme returns the dlq support of the transport whose URL scheme is
// name (nil when none has it), and the names of every scheme the command's
// transports have, for a usage error.
func (o *Options) scheme(name string) (transport.Transport, []string) {
	var names []string
	var found transport.Transport
	for _, t := range dlqSchemeOrder {
		dt, ok := o.Transports[t]
		if !ok {
			continue
		}
		n := dt.Addresses().Forms().Scheme
		names = append(names, n)
		if n == name {
			found = dt
		}
	}
	return found, names
}

// resolveURL synthesises a subscription for a destination named by URL,
// parsed by its transport's own scheme; the transport makes the target.
func (o *Options) resolveURL(arg string) (*transport.Target, error) {
	scheme, _, _ := strings.Cut(arg, "://")
	dt, names := o.scheme(scheme)
	if dt == nil {
		return nil, cmdutil.UsageErr(fmt.Errorf("destination %q: unknown scheme %q: valid schemes are %s", redact.Quoted(arg), redact.Quoted(scheme), strings.Join(names, ", ")))
	}
	as := dt.Addresses()
	a, err := as.Parse(arg)
	t, err := dt.URLTarget(o.urlOptions(), arg, as, a, err)
	return t, cmdutil.ExitCoded(err)
}

// nativeTarget is the channel the broker's own redrive moves s's messages
// to (SQS redrivePolicy.deadLetterQueue, the Pub/Sub deadLetterPolicy's
// subscription, RocketMQ's %DLQ%<consumerGroup>); false when s has none.
func nativeTarget(s *config.Subscription) (string, bool) {
	switch {
	case s.SQS != nil && s.SQS.RedrivePolicy != nil:
		return s.SQS.RedrivePolicy.DeadLetterQueue, true
	case s.GCP != nil && s.GCP.DeadLetterPolicy != nil:
		// gcp.DeadLetterPolicy: "" means "dlq-<subscription>".
		return transport.GCPNativeSubscription(s), true
	case s.RocketMQ != nil:
		return rocketmq.DLQTopic(s.RocketMQ.ConsumerGroup), true
	}
	return "", false
}

// RedriveTarget reports whether t, the destination o.Dest names, is known
// to be where a broker's own redrive moves messages, so that a message
// there without rejection metadata was moved by that redrive: a
// subscription's native redrive target (its --native destination, or a
// --dlq or --invalid destination that is the same channel), or a RocketMQ
// %DLQ% topic, which only the broker writes. Any other destination given
// by URL may be a source queue, where a fresh message carries no
// rejection metadata either.
func (o *Options) RedriveTarget(t *transport.Target) bool {
	if strings.Contains(o.Dest, "://") || t.S == nil {
		return t.S != nil && t.S.Transport == config.TransportRocketMQ && strings.HasPrefix(t.Dest, rocketmq.DLQTopic(""))
	}
	native, ok := nativeTarget(t.S)
	return ok && native == t.Dest
}

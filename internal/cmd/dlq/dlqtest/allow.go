package dlqtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/message"
)

// AllowCase is one transport of TestDLQReplay_AllowList: a
// subscriptions file with subscriptions orders and audit that dead-letter
// to one destination, and victim, which the file knows but which
// dead-letters nowhere; the dead-letter destination holds a copy for orders,
// one for audit and a forged one whose originalTopic names victim.
type AllowCase struct {
	Name string
	// YAML is the subscriptions file.
	YAML string
	// Seed puts known1 (to orders), known2 (to audit) and forged (to
	// Victim) in the dead-letter destination.
	Seed func(t *testing.T)
	// Orders, Audit and Victim are the destinations' names as a replay
	// line prints them.
	Orders, Audit, Victim string
	// PeekVictim and PeekAudit read those destinations (dlq peek args).
	PeekVictim, PeekAudit []string
	// FanOut: a replay to a topic needs --fan-out (RocketMQ: every
	// consumer group of a topic receives it, and none can be listed).
	FanOut bool
}

// Prepare writes the case's subscriptions file into a new directory and
// seeds the dead-letter destination; it returns the directory and the
// file's path.
func (c AllowCase) Prepare(t *testing.T) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "brighter.yaml")
	if err := os.WriteFile(file, []byte(c.YAML), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Seed(t)
	return dir, file
}

// Extra are the flags every dlq command of the case needs (none: the
// subscriptions file has the connection).
func (c AllowCase) Extra() []string { return nil }

// ReplayFlags are the flags a replay, edit or console of c needs to
// publish to a topic without --to (--fan-out on RocketMQ).
func (c AllowCase) ReplayFlags() []string {
	if c.FanOut {
		return []string{"--fan-out"}
	}
	return nil
}

// Stamped is a routed copy for dlq, as the Router writes it, whose
// originalTopic is topic.
func Stamped(id, topic, dlq string) *message.Message {
	m := message.New(id, topic, message.MTCommand, []byte(`{}`))
	return message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, time.Now())
}

// SQSAllowCase is the AllowCase of SQS (fauxqs); run names its destinations.
func SQSAllowCase(t *testing.T, ctx context.Context, run string) AllowCase {
	emu := cmdtest.SharedSQS(t)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	q := func(n string) string { return n + "-" + run }
	for _, n := range []string{"orders", "audit", "victim", "dlq"} {
		if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q(n)}).EnsureChannels(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sub := func(name, dlq string) string {
		s := "  - name: " + name + "\n    transport: sqs\n    channelName: " + q(name) + "\n    handler: {type: builtin, name: ack}\n"
		if dlq != "" {
			s += "    deadLetterRoutingKey: " + dlq + "\n"
		}
		return s
	}
	return AllowCase{
		Name: "sqs",
		YAML: fmt.Sprintf("connections:\n  aws:\n    region: %s\n    endpoint: %s\nsubscriptions:\n", sqstest.Region, emu.Endpoint) +
			sub("orders", q("dlq")) + sub("audit", q("dlq")) + sub("victim", ""),
		Seed: func(t *testing.T) {
			p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
			// The forged copy's originalTopic is an SQS bag entry.
			for id, topic := range map[string]string{"known1": q("orders"), "known2": q("audit"), "forged": q("victim")} {
				if err := p.Send(ctx, Stamped(id+"-"+run, topic, q("dlq"))); err != nil {
					t.Fatal(err)
				}
			}
		},
		Orders: q("orders"), Audit: q("audit"), Victim: q("victim"),
		PeekVictim: []string{"dlq", "peek", "sqs://" + q("victim"), "--endpoint", emu.Endpoint, "--region", sqstest.Region, "--output", "json"},
		PeekAudit:  []string{"dlq", "peek", "sqs://" + q("audit"), "--endpoint", emu.Endpoint, "--region", sqstest.Region, "--output", "json"},
	}
}

// GCPAllowCase is the AllowCase of Pub/Sub (Google's emulator); run names its destinations.
func GCPAllowCase(t *testing.T, ctx context.Context, run string) AllowCase {
	client, srv := gcptest.Start(t, "allow", nil, gcp.Connect)
	pj := srv.Project
	topic := func(n string) string { return "projects/" + pj + "/topics/" + n }
	for _, n := range []string{"orders", "audit", "victim", "orders-dlq"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
			t.Fatal(err)
		}
		sub := n + "-sub"
		if n == "orders-dlq" {
			sub = n // a rejection topic's subscription has the topic's id
		}
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name: "projects/" + pj + "/subscriptions/" + sub, Topic: topic(n), AckDeadlineSeconds: 60,
		}); err != nil {
			t.Fatal(err)
		}
	}
	sub := func(name, dlq string) string {
		s := "  - name: " + name + "\n    transport: gcp\n    routingKey: " + name + "\n    channelName: " + name + "-sub\n    handler: {type: builtin, name: ack}\n"
		if dlq != "" {
			s += "    deadLetterRoutingKey: " + dlq + "\n"
		}
		return s
	}
	peek := func(sub string) []string {
		return []string{"dlq", "peek", "pubsub://projects/" + pj + "/subscriptions/" + sub, "--endpoint", srv.Addr, "--output", "json"}
	}
	return AllowCase{
		Name: "gcp",
		YAML: fmt.Sprintf("connections:\n  gcp:\n    projectId: %s\n    emulatorHost: %s\nsubscriptions:\n", pj, srv.Addr) +
			sub("orders", "orders-dlq") + sub("audit", "orders-dlq") + sub("victim", ""),
		Seed: func(t *testing.T) {
			if err := gcp.NewProducer(client, gcp.ProducerOptions{}).Send(ctx, Stamped("known1-"+run, "orders", "orders-dlq")); err != nil {
				t.Fatal(err)
			}
			// A copy with no rejection metadata (moved there as a native
			// redrive would) goes to its Topic attribute: known2 names
			// audit, the forged one names victim.
			pub := client.Publisher(topic("orders-dlq"))
			defer pub.Stop()
			for id, to := range map[string]string{"known2": "audit", "forged": "victim"} {
				w := gcp.Encode(message.New(id+"-"+run, to, message.MTCommand, []byte(`{}`)))
				if _, err := pub.Publish(ctx, &pubsub.Message{Data: w.Data, Attributes: w.Attributes}).Get(ctx); err != nil {
					t.Fatal(err)
				}
			}
		},
		Orders: "orders", Audit: "audit", Victim: "victim",
		PeekVictim: peek("victim-sub"), PeekAudit: peek("audit-sub"),
	}
}

// RocketMQAllowCase is the AllowCase of RocketMQ (the test broker); run names its destinations.
func RocketMQAllowCase(t *testing.T, ctx context.Context, run string) AllowCase {
	rocketmq.ConfigureClientLog(t.TempDir())
	srv, err := rmqtest.Start(rmqtest.Options{AutoCreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	q := func(n string) string { return n + "-" + run }
	sub := func(name, dlq string) string {
		s := "  - name: " + name + "\n    transport: rocketmq\n    channelName: " + q(name) + "\n    rocketmq: {consumerGroup: g-" + q(name) + "}\n    handler: {type: builtin, name: ack}\n"
		if dlq != "" {
			s += "    deadLetterRoutingKey: " + dlq + "\n"
		}
		return s
	}
	peek := func(topic string) []string {
		return []string{"dlq", "peek", "rocketmq://" + topic + "?group=check-" + topic, "--rocketmq-endpoint", srv.Endpoint(), "--output", "json"}
	}
	return AllowCase{
		FanOut: true,
		Name:   "rocketmq",
		YAML: fmt.Sprintf("connections:\n  rocketmq:\n    endpoint: %s\nsubscriptions:\n", srv.Endpoint()) +
			sub("orders", q("dlq")) + sub("audit", q("dlq")) + sub("victim", ""),
		Seed: func(t *testing.T) {
			p, err := rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmq.Connection{Endpoint: srv.Endpoint(), ClientLogDir: t.TempDir()}, MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = p.Close(ctx) }()
			// The forged copy's originalTopic is a message property.
			for id, topic := range map[string]string{"known1": q("orders"), "known2": q("audit"), "forged": q("victim")} {
				if err := p.Send(ctx, Stamped(id+"-"+run, topic, q("dlq"))); err != nil {
					t.Fatal(err)
				}
			}
		},
		Orders: q("orders"), Audit: q("audit"), Victim: q("victim"),
		PeekVictim: peek(q("victim")), PeekAudit: peek(q("audit")),
	}
}

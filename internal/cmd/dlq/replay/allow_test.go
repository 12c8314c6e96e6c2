package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/message"
)

// allowCase is one transport of TestDLQReplay_AllowList: a
// subscriptions file with subscriptions orders and audit that dead-letter
// to one destination, and victim, which the file knows but which
// dead-letters nowhere; the dead-letter destination holds a copy for orders,
// one for audit and a forged one whose originalTopic names victim.
type allowCase struct {
	name string
	// yaml is the subscriptions file.
	yaml string
	// seed puts known1 (to orders), known2 (to audit) and forged (to
	// victim) in the dead-letter destination.
	seed func(t *testing.T)
	// orders, audit and victim are the destinations' names as a replay
	// line prints them.
	orders, audit, victim string
	// peekVictim and peekAudit read those destinations (dlq peek args).
	peekVictim, peekAudit []string
	// fanOut: a replay to a topic needs --fan-out (RocketMQ: every
	// consumer group of a topic receives it, and none can be listed).
	fanOut bool
}

// TestDLQReplay_AllowList: without --to, dlq replay publishes only
// to a destination the subscriptions file knows for the dead-letter
// destination read; a forged originalTopic (an SQS bag entry, a Pub/Sub
// Topic attribute, a RocketMQ property) is refused per message (listed,
// counted, left in place), --dry-run shows each decision, every known
// destination still works, and --allow-any-destination replays the forged
// copy; on every transport against its emulator.
func TestDLQReplay_AllowList(t *testing.T) {
	t.Parallel() // each case on destinations named after run; `brighter` processes, waits on peeks
	run := fmt.Sprintf("al%d", time.Now().UnixNano()%1e9)
	ctx := context.Background()
	cases := []allowCase{sqsAllowCase(t, ctx, run), gcpAllowCase(t, ctx, run), rocketmqAllowCase(t, ctx, run)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, file := c.prepare(t)
			replay := append(append([]string{"dlq", "replay", "orders", "--config", file}, c.extra()...), c.replayFlags()...)

			code, out, errOut := cmdtest.BrighterExit(t, dir, append(replay, "--dry-run")...)
			for _, want := range []string{
				"would replay known1-" + run + " -> " + c.orders + "\n",
				"would replay known2-" + run + " -> " + c.audit + "\n",
				"would refuse forged-" + run + " -> " + c.victim + ": not a destination the subscriptions file knows",
				"would replay 2, skipped 0, failed 0, refused 1\n",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("dry run: stdout lacks %q (exit %d)\nstdout:\n%s\nstderr:\n%s", want, code, out, errOut)
				}
			}

			code, out, errOut = cmdtest.BrighterExit(t, dir, append(replay, "--yes")...)
			if code != cmdutil.ExitFailure || !strings.Contains(errOut, "1 message refused") {
				t.Errorf("replay: exit %d, want %d and the refusal\nstderr:\n%s", code, cmdutil.ExitFailure, errOut)
			}
			for _, want := range []string{
				"replayed known1-" + run + " -> " + c.orders + "\n",
				"replayed known2-" + run + " -> " + c.audit + "\n",
				"refused forged-" + run + " -> " + c.victim,
				"replayed 2, skipped 0, failed 0, refused 1\n",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("replay: stdout lacks %q\nstdout:\n%s\nstderr:\n%s", want, out, errOut)
				}
			}
			if ids := cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "orders", "--config", file, "--output", "json"}, c.extra()...)...); !slices.Equal(ids, []string{"forged-" + run}) {
				t.Errorf("after the replay the dead-letter destination holds %v, want only the refused forged-%s", ids, run)
			}
			if ids := cmdtest.PeekIDs(t, dir, c.peekVictim...); slices.Contains(ids, "forged-"+run) {
				t.Errorf("the refused copy reached the victim: %v", ids)
			}
			if ids := cmdtest.PeekIDs(t, dir, c.peekAudit...); !slices.Contains(ids, "known2-"+run) {
				t.Errorf("known2 did not reach audit: %v", ids)
			}

			code, out, errOut = cmdtest.BrighterExit(t, dir, append(replay, "--allow-any-destination", "--yes")...)
			if code != cmdutil.ExitOK || !strings.Contains(out, "replayed forged-"+run+" -> "+c.victim+"\n") {
				t.Errorf("replay --allow-any-destination: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if ids := cmdtest.PeekIDs(t, dir, c.peekVictim...); !slices.Contains(ids, "forged-"+run) {
				t.Errorf("--allow-any-destination did not replay the forged copy to the victim: %v", ids)
			}
		})
	}
}

// prepare writes the case's subscriptions file into a new directory and
// seeds the dead-letter destination; it returns the directory and the
// file's path.
func (c allowCase) prepare(t *testing.T) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "brighter.yaml")
	if err := os.WriteFile(file, []byte(c.yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c.seed(t)
	return dir, file
}

// extra are the flags every dlq command of the case needs (none: the
// subscriptions file has the connection).
func (c allowCase) extra() []string { return nil }

// replayFlags are the flags a replay, edit or console of c needs to
// publish to a topic without --to (--fan-out on RocketMQ).
func (c allowCase) replayFlags() []string {
	if c.fanOut {
		return []string{"--fan-out"}
	}
	return nil
}

// stamped is a routed copy for dlq, as the Router writes it, whose
// originalTopic is topic.
func stamped(id, topic, dlq string) *message.Message {
	m := message.New(id, topic, message.MTCommand, []byte(`{}`))
	return message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, time.Now())
}

func sqsAllowCase(t *testing.T, ctx context.Context, run string) allowCase {
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
	return allowCase{
		name: "sqs",
		yaml: fmt.Sprintf("connections:\n  aws:\n    region: %s\n    endpoint: %s\nsubscriptions:\n", sqstest.Region, emu.Endpoint) +
			sub("orders", q("dlq")) + sub("audit", q("dlq")) + sub("victim", ""),
		seed: func(t *testing.T) {
			p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
			// The forged copy's originalTopic is an SQS bag entry.
			for id, topic := range map[string]string{"known1": q("orders"), "known2": q("audit"), "forged": q("victim")} {
				if err := p.Send(ctx, stamped(id+"-"+run, topic, q("dlq"))); err != nil {
					t.Fatal(err)
				}
			}
		},
		orders: q("orders"), audit: q("audit"), victim: q("victim"),
		peekVictim: []string{"dlq", "peek", "sqs://" + q("victim"), "--endpoint", emu.Endpoint, "--region", sqstest.Region, "--output", "json"},
		peekAudit:  []string{"dlq", "peek", "sqs://" + q("audit"), "--endpoint", emu.Endpoint, "--region", sqstest.Region, "--output", "json"},
	}
}

func gcpAllowCase(t *testing.T, ctx context.Context, run string) allowCase {
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
	return allowCase{
		name: "gcp",
		yaml: fmt.Sprintf("connections:\n  gcp:\n    projectId: %s\n    emulatorHost: %s\nsubscriptions:\n", pj, srv.Addr) +
			sub("orders", "orders-dlq") + sub("audit", "orders-dlq") + sub("victim", ""),
		seed: func(t *testing.T) {
			if err := gcp.NewProducer(client, gcp.ProducerOptions{}).Send(ctx, stamped("known1-"+run, "orders", "orders-dlq")); err != nil {
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
		orders: "orders", audit: "audit", victim: "victim",
		peekVictim: peek("victim-sub"), peekAudit: peek("audit-sub"),
	}
}

func rocketmqAllowCase(t *testing.T, ctx context.Context, run string) allowCase {
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
	return allowCase{
		fanOut: true,
		name:   "rocketmq",
		yaml: fmt.Sprintf("connections:\n  rocketmq:\n    endpoint: %s\nsubscriptions:\n", srv.Endpoint()) +
			sub("orders", q("dlq")) + sub("audit", q("dlq")) + sub("victim", ""),
		seed: func(t *testing.T) {
			p, err := rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmq.Connection{Endpoint: srv.Endpoint(), ClientLogDir: t.TempDir()}, MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = p.Close(ctx) }()
			// The forged copy's originalTopic is a message property.
			for id, topic := range map[string]string{"known1": q("orders"), "known2": q("audit"), "forged": q("victim")} {
				if err := p.Send(ctx, stamped(id+"-"+run, topic, q("dlq"))); err != nil {
					t.Fatal(err)
				}
			}
		},
		orders: q("orders"), audit: q("audit"), victim: q("victim"),
		peekVictim: peek(q("victim")), peekAudit: peek(q("audit")),
	}
}

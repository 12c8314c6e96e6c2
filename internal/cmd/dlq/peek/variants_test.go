package peek

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// dlqVariant is one kind of dead-letter destination the triage commands
// must work on: a subscription "orders" in file whose dead-letter
// destination holds what seed put there.
type dlqVariant struct {
	name string
	file string
	// seed puts the routed copies ms in the dead-letter destination.
	seed func(t *testing.T, ms []*message.Message)
	// to is the replay's --to flags (none: the subscription's own queue).
	to []string
	// dest reads where replays land (dlq peek args, -o json).
	dest []string
	// keys: the variant carries partition keys (an SQS FIFO message group,
	// a Pub/Sub ordering key) that every copy must keep.
	keys bool
}

// variantMessages are the routed copies every variant seeds: two of one
// failure group (t1, t2) and one of another (b1), each with a partition key
// of its own (a FIFO queue hands out one message per group at a time, and a
// peek holds what it read).
func variantMessages(run, topic, dlq string) []*message.Message {
	var ms []*message.Message
	for i, s := range []struct{ id, why string }{{"t1", "timeout calling payments after 30s"}, {"t2", "timeout calling payments after 31s"}, {"b1", "order has no customer"}} {
		m := message.New(s.id+"-"+run, topic, message.MTCommand, []byte(fmt.Sprintf(`{"n":%d}`, i)))
		m.Header.PartitionKey = fmt.Sprintf("key%d-%s", i, run)
		ms = append(ms, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: s.why}, time.Now()))
	}
	return ms
}

// TestDLQTriageCommands_EveryQueueVariant: stats' failure groups,
// peek --group-id, replay --copy -o json of a group, edit --body-file,
// archive, restore -s and purge, with -c FILE and a subscription name, on
// the dead-letter destinations of an SQS FIFO queue, SNS-fed queues with raw
// delivery and with the SNS envelope (fauxqs), and an ordered Pub/Sub
// subscription (Google's emulator); every copy keeps its partition key (the
// FIFO message group, the ordering key) where the variant has one.
func TestDLQTriageCommands_EveryQueueVariant(t *testing.T) {
	t.Parallel() // destinations named after run; `brighter` processes
	run := fmt.Sprintf("va%d", time.Now().UnixNano()%1e9)
	ctx := context.Background()
	variants := []dlqVariant{sqsFIFOVariant(t, ctx, run), snsVariant(t, ctx, run, true), snsVariant(t, ctx, run, false), pubsubOrderingVariant(t, ctx, run)}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ms := variantMessages(run, "orders", "dlq")
			v.seed(t, ms)
			dir := t.TempDir()
			dlq := func(args ...string) (string, string) {
				t.Helper()
				code, out, errOut := cmdtest.BrighterExit(t, dir, append(append([]string{"dlq"}, args...), "-c", v.file, "--wait", "1s")...)
				if code != cmdutil.ExitOK {
					t.Fatalf("dlq %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
				}
				return out, errOut
			}
			inDLQ := func() []string {
				t.Helper()
				out, _ := dlq("peek", "-s", "orders", "-o", "json")
				return recordIDs(t, out, nil)
			}

			// stats: two failure groups, the timeout one of two messages
			out, _ := dlq("stats", "-s", "orders", "-o", "json")
			var st struct {
				Total  int `json:"total"`
				Groups []struct {
					ID      string `json:"id"`
					Count   int    `json:"count"`
					Message string `json:"message"`
				} `json:"groups"`
			}
			if err := json.Unmarshal([]byte(out), &st); err != nil {
				t.Fatalf("stats -o json: %v\n%s", err, out)
			}
			group := ""
			for _, g := range st.Groups {
				if strings.Contains(g.Message, "timeout calling payments") && g.Count == 2 {
					group = g.ID
				}
			}
			if st.Total != 3 || len(st.Groups) != 2 || group == "" {
				t.Fatalf("stats: %d messages in %d groups, want 3 in 2 with a timeout group of 2:\n%s", st.Total, len(st.Groups), out)
			}

			// peek --group-id
			out, _ = dlq("peek", "-s", "orders", "--group-id", group, "-o", "json")
			if ids := recordIDs(t, out, nil); !dlqtest.SameIDs(ids, "t1-"+run, "t2-"+run) {
				t.Errorf("peek --group-id %s: %v, want t1 and t2", group, ids)
			}

			// replay --copy -o json of the group: one record each and a
			// summary; the dead letters stay
			out, _ = dlq(append([]string{"replay", "-s", "orders", "--group-id", group, "--copy", "--yes", "-o", "json"}, v.to...)...)
			var replayed []string
			summary := false
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var r struct {
					ID       string `json:"id"`
					Replayed *int   `json:"replayed"`
				}
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatalf("replay -o json line %q: %v", l, err)
				}
				switch {
				case r.Replayed != nil:
					summary = *r.Replayed == 2
				case r.ID != "":
					replayed = append(replayed, r.ID)
				}
			}
			if !dlqtest.SameIDs(replayed, "t1-"+run, "t2-"+run) || !summary {
				t.Errorf("replay --copy -o json: records for %v, summary replayed 2: %v\n%s", replayed, summary, out)
			}
			if ids := inDLQ(); len(ids) != 3 {
				t.Errorf("after replay --copy the dead-letter destination holds %v, want all three", ids)
			}

			// edit --body-file: the edited copy replaces b1
			body := filepath.Join(dir, "fixed.json")
			if err := os.WriteFile(body, []byte(`{"fixed":true}`), 0o600); err != nil {
				t.Fatal(err)
			}
			dlq(append([]string{"edit", "b1-" + run, "-s", "orders", "--body-file", body, "--set", "fixedBy=ops"}, v.to...)...)
			keys := map[string]string{}
			code, at, errOut := cmdtest.BrighterExit(t, dir, v.dest...)
			if code != cmdutil.ExitOK {
				t.Fatalf("peek the destination: exit %d\n%s", code, errOut)
			}
			if ids := recordIDs(t, at, keys); !dlqtest.SameIDs(ids, "t1-"+run, "t2-"+run, "b1-"+run) {
				t.Errorf("the destination holds %v, want the copies of t1, t2 and the edited b1", ids)
			}
			if !strings.Contains(at, `{\"fixed\":true}`) || !strings.Contains(at, `"fixedBy":"ops"`) {
				t.Errorf("the edited copy of b1 is not at the destination:\n%s", at)
			}
			if v.keys {
				for _, m := range ms {
					if keys[m.Header.MessageID] != m.Header.PartitionKey {
						t.Errorf("the copy of %s has partition key %q, want %q", m.Header.MessageID, keys[m.Header.MessageID], m.Header.PartitionKey)
					}
				}
			}

			// archive everything left, restore it, purge it
			archive := filepath.Join(dir, "archive.jsonl")
			dlq("archive", "-s", "orders", "--all", "--file", archive)
			if ids := inDLQ(); len(ids) != 0 {
				t.Errorf("after archive --all the dead-letter destination holds %v", ids)
			}
			data, err := os.ReadFile(archive)
			if err != nil {
				t.Fatal(err)
			}
			if ids := recordIDs(t, string(data), nil); !dlqtest.SameIDs(ids, "t1-"+run, "t2-"+run) {
				t.Errorf("the archive holds %v, want t1 and t2", ids)
			}
			dlq("restore", archive, "-s", "orders")
			keys = map[string]string{}
			out, _ = dlq("peek", "-s", "orders", "-o", "json")
			if ids := recordIDs(t, out, keys); !dlqtest.SameIDs(ids, "t1-"+run, "t2-"+run) {
				t.Errorf("after restore the dead-letter destination holds %v, want t1 and t2", ids)
			}
			if v.keys && (keys["t1-"+run] != ms[0].Header.PartitionKey || keys["t2-"+run] != ms[1].Header.PartitionKey) {
				t.Errorf("restored partition keys %v, want %s and %s", keys, ms[0].Header.PartitionKey, ms[1].Header.PartitionKey)
			}
			dlq("purge", "-s", "orders", "--all", "--yes")
			if ids := inDLQ(); len(ids) != 0 {
				t.Errorf("after purge the dead-letter destination holds %v", ids)
			}
		})
	}
}

// recordIDs reads the ids of JSON lines (peek -o json, an archive) and,
// with keys, each one's partition key.
func recordIDs(t *testing.T, lines string, keys map[string]string) []string {
	t.Helper()
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		if l == "" {
			continue
		}
		var r struct {
			ID           string `json:"id"`
			PartitionKey string `json:"partitionKey"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("record %q: %v", l, err)
		}
		ids = append(ids, r.ID)
		if keys != nil {
			keys[r.ID] = r.PartitionKey
		}
	}
	return ids
}

// sqsFIFOVariant: a FIFO subscription whose dead-letter queue is FIFO;
// replays go to another FIFO queue.
func sqsFIFOVariant(t *testing.T, ctx context.Context, run string) dlqVariant {
	emu := cmdtest.SharedSQS(t)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	q := func(n string) string { return n + "-f" + run }
	for _, n := range []string{"orders", "dlq", "fixed"} {
		if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q(n), Fifo: true}).EnsureChannels(ctx); err != nil {
			t.Fatal(err)
		}
	}
	conn := fmt.Sprintf("connections:\n  aws:\n    region: %s\n    endpoint: %s\n", sqstest.Region, emu.Endpoint)
	return dlqVariant{
		name: "sqs-fifo",
		file: dlqtest.WriteYAML(t, conn+"subscriptions:\n  - name: orders\n    transport: sqs\n    channelName: "+q("orders")+
			"\n    sqs: {queueType: fifo}\n    deadLetterRoutingKey: "+q("dlq")+"\n    handler: {type: builtin, name: ack}\n"),
		seed: func(t *testing.T, ms []*message.Message) {
			p := sqs.NewProducer(c, sqs.ProducerOptions{Fifo: true, MakeChannels: broker.MakeValidate})
			for _, m := range ms {
				m.Header.Topic = q("dlq")
				if err := p.Send(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
		},
		to:   []string{"--to", q("fixed")},
		dest: []string{"dlq", "peek", "sqs://" + q("fixed") + ".fifo", "--endpoint", emu.Endpoint, "--region", sqstest.Region, "-o", "json"},
		keys: true,
	}
}

// snsVariant: a subscription fed by an SNS topic, with raw delivery or the
// SNS envelope; its dead-letter destination is a queue, and a replay
// without --to goes to the subscription's own queue (the fan-out guard).
func snsVariant(t *testing.T, ctx context.Context, run string, raw bool) dlqVariant {
	emu := cmdtest.SharedSQS(t)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	name := map[bool]string{true: "sns-raw", false: "sns-envelope"}[raw]
	q := func(n string) string { return n + "-" + name + run }
	if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q("orders"), Topic: q("placed"), Envelope: !raw}).EnsureChannels(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q("dlq")}).EnsureChannels(ctx); err != nil {
		t.Fatal(err)
	}
	conn := fmt.Sprintf("connections:\n  aws:\n    region: %s\n    endpoint: %s\n", sqstest.Region, emu.Endpoint)
	return dlqVariant{
		name: name,
		file: dlqtest.WriteYAML(t, conn+"subscriptions:\n  - name: orders\n    transport: sqs\n    routingKey: "+q("placed")+"\n    channelName: "+q("orders")+
			fmt.Sprintf("\n    sqs: {channelType: pubSub, rawMessageDelivery: %t}\n", raw)+"    deadLetterRoutingKey: "+q("dlq")+"\n    handler: {type: builtin, name: ack}\n"),
		seed: func(t *testing.T, ms []*message.Message) {
			p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
			for _, m := range ms {
				m.Header.Topic = q("dlq")
				m.Header.Bag[message.KeyOriginalTopic] = q("placed")
				if err := p.Send(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
		},
		dest: []string{"dlq", "peek", "sqs://" + q("orders"), "--endpoint", emu.Endpoint, "--region", sqstest.Region, "-o", "json"},
	}
}

// pubsubOrderingVariant: an ordered Pub/Sub subscription whose dead-letter
// topic's subscription is ordered too; replays go to another ordered topic.
func pubsubOrderingVariant(t *testing.T, ctx context.Context, run string) dlqVariant {
	client, srv := gcptest.Start(t, "variant", nil, gcp.Connect)
	pj := srv.Project
	topic := func(n string) string { return "projects/" + pj + "/topics/" + n }
	for n, sub := range map[string]string{"orders": "orders-sub", "orders-dlq": "orders-dlq", "fixed": "fixed-sub"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name: "projects/" + pj + "/subscriptions/" + sub, Topic: topic(n), AckDeadlineSeconds: 60, EnableMessageOrdering: true,
		}); err != nil {
			t.Fatal(err)
		}
	}
	return dlqVariant{
		name: "pubsub-ordering",
		file: dlqtest.WriteYAML(t, fmt.Sprintf("connections:\n  gcp:\n    projectId: %s\n    emulatorHost: %s\n", pj, srv.Addr)+
			"subscriptions:\n  - name: orders\n    transport: gcp\n    routingKey: orders\n    channelName: orders-sub\n    gcp: {mode: pull, enableMessageOrdering: true}\n    deadLetterRoutingKey: orders-dlq\n    handler: {type: builtin, name: ack}\n"),
		seed: func(t *testing.T, ms []*message.Message) {
			p := gcp.NewProducer(client, gcp.ProducerOptions{EnableMessageOrdering: true})
			for _, m := range ms {
				m.Header.Topic = "orders-dlq"
				if err := p.Send(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
		},
		to:   []string{"--to", "fixed"},
		dest: []string{"dlq", "peek", "pubsub://projects/" + pj + "/subscriptions/fixed-sub", "--endpoint", srv.Addr, "-o", "json"},
		keys: true,
	}
}

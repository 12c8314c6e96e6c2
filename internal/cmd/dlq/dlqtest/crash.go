package dlqtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// CrashQueue makes an SQS queue on fauxqs holding n routed copies (c0 ..
// c<n-1>) and a destination queue; it returns their names and the flags
// that reach them.
func CrashQueue(t *testing.T, n int) (dlq, dest string, conn []string) {
	t.Helper()
	emu := cmdtest.SharedSQS(t)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	dlq = fmt.Sprintf("crash-dlq-%d", time.Now().UnixNano()%1e9)
	dest = dlq + "-dest"
	for _, q := range []string{dlq, dest} {
		if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q}).EnsureChannels(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	var batch []*message.Message
	for i := range n {
		m := message.New(fmt.Sprintf("c%d", i), dest, message.MTCommand, []byte(`{}`))
		batch = append(batch, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, time.Now()))
		if len(batch) == 10 || i == n-1 {
			for _, err := range p.SendBatch(context.Background(), batch) {
				if err != nil {
					t.Fatal(err)
				}
			}
			batch = batch[:0]
		}
	}
	return dlq, dest, []string{"--endpoint", emu.Endpoint, "--region", sqstest.Region}
}

// CrashIDs reads the message ids of JSON lines (an archive, peek -o json).
func CrashIDs(t *testing.T, data []byte) map[string]int {
	t.Helper()
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			// A SIGKILL can cut the last line of an archive short: that
			// message was never synced, so never removed.
			continue
		}
		out[r.ID]++
	}
	return out
}

// SigkillAfter starts `brighter ARGS`, SIGKILLs it after d, and waits for it.
func SigkillAfter(t *testing.T, d time.Duration, args ...string) {
	t.Helper()
	cmd := CrashCmd(t, args...)
	cmd.Env = cmdtest.Env() // fauxqs's static credentials
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { _ = cmd.Process.Kill() })
	_ = cmd.Wait()
	timer.Stop()
	t.Logf("%v after %s; stderr: %s", args[:2], d, errOut.String())
}

// CrashPeekIDs is CrashAwaitAll over the SQS queue (fauxqs, flags conn).
func CrashPeekIDs(t *testing.T, queue string, conn []string, n int, also map[string]int) map[string]int {
	t.Helper()
	return CrashAwaitAll(t, append([]string{"dlq", "peek", "sqs://" + queue, "-o", "json", "--wait", "1s"}, conn...), n, also)
}

// CrashDestIDs reads the ids of a queue once (peek -o json).
func CrashDestIDs(t *testing.T, queue string, conn []string) map[string]int {
	t.Helper()
	out, err := CrashCmd(t, append([]string{"dlq", "peek", "sqs://" + queue, "-o", "json", "--wait", "1s"}, conn...)...).Output()
	if err != nil {
		t.Fatalf("peek %s: %v", queue, err)
	}
	return CrashIDs(t, out)
}

// CrashDestCopies reads queue once (peek -o json) and returns, per message
// id, the replay ids of its copies there (inspect.KeyReplayID), in the
// order read.
func CrashDestCopies(t *testing.T, queue string, conn []string) map[string][]string {
	t.Helper()
	raw, err := CrashCmd(t, append([]string{"dlq", "peek", "sqs://" + queue, "-o", "json", "--wait", "1s"}, conn...)...).Output()
	if err != nil {
		t.Fatalf("peek %s: %v", queue, err)
	}
	got := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			ID  string         `json:"id"`
			Bag map[string]any `json:"bag"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("peek line %q: %v", sc.Text(), err)
		}
		rid, _ := r.Bag[inspect.KeyReplayID].(string)
		got[r.ID] = append(got[r.ID], rid)
	}
	return got
}

// CrashDuplicatesInFlight reports an error (the test goes on) for each id
// c0..c<n-1> that got (from CrashDestCopies) lacks, and for each it holds
// more than once whose first copy's replay id is not in inFlight (the
// journal's "sending" entries at kill, which names the kill or kills in
// the message). It returns how many ids got holds more than once.
func CrashDuplicatesInFlight(t *testing.T, got map[string][]string, n int, inFlight map[string]bool, kill string) int {
	t.Helper()
	dups := 0
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		switch copies := got[id]; {
		case len(copies) == 0:
			t.Errorf("%s is not at the destination", id)
		case len(copies) > 1:
			dups++
			if !inFlight[copies[0]] {
				t.Errorf("%s is at the destination %d times, but its copy was not in flight at %s (replay id %s)", id, len(copies), kill, copies[0])
			}
		}
	}
	return dups
}

// LastLines is the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// CrashCmd is `brighter args...` with fauxqs's static credentials
// (cmdtest.Env): the crash tests run in parallel, so none sets them in the
// test process's own environment.
func CrashCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(cmdtest.Bin(t), args...)
	cmd.Env = cmdtest.Env()
	return cmd
}

// CrashAwaitAll waits (with a deadline) until every id c0..c<n-1> is read
// by `brighter peekArgs` (a dlq peek -o json) or is in also; it fails naming
// the ids that are nowhere, and returns what the peek read.
func CrashAwaitAll(t *testing.T, peekArgs []string, n int, also map[string]int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := CrashCmd(t, peekArgs...).Output()
		if err != nil {
			t.Fatalf("peek: %v", err)
		}
		got := CrashIDs(t, out)
		var missing []string
		for i := range n {
			if id := fmt.Sprintf("c%d", i); got[id] == 0 && also[id] == 0 {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages are nowhere (neither read by %v nor elsewhere): %v", len(missing), peekArgs[:3], missing)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// CrashBroker is a dead-letter destination of n routed copies (c0 ..
// c<n-1>) on another transport than SQS, for the SIGKILL tests: a
// subscription "orders" in file whose dead-letter destination holds them,
// and a topic "dest" (its name in dest) a replay may publish to.
type CrashBroker struct {
	Name string
	// Kills is how many SIGKILLs a test may land: Google's emulator may
	// stop redelivering a message whose ack deadline lapsed more than once
	// or twice (docs/emulators.md, Google's Pub/Sub emulator), so there a test kills once.
	Kills int
	File  string
	Dest  string
	// PeekDest reads dest (dlq peek args, -o json).
	PeekDest []string
}

// CrashBrokers makes the RocketMQ test broker's and Google's Pub/Sub
// emulator's CrashBroker, each holding n routed copies.
func CrashBrokers(t *testing.T, n int) []CrashBroker {
	t.Helper()
	ctx := context.Background()
	run := fmt.Sprintf("ak%d", time.Now().UnixNano()%1e9)
	seed := func(p broker.Producer, dlq string) {
		for i := range n {
			if err := p.Send(ctx, Stamped(fmt.Sprintf("c%d", i), "orders", dlq)); err != nil {
				t.Fatal(err)
			}
		}
	}
	rocketmq.ConfigureClientLog(t.TempDir())
	srv, err := rmqtest.Start(rmqtest.Options{AutoCreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	// The reader group gets a high retry maximum, as the dlq page asks of a
	// real broker: every read is a delivery for it, and a scan longer than
	// --visibility 2s (an edit or replay reading the whole destination to
	// find every stored copy of an id) reads a message again each time its
	// hold lapses, so the default 16 would move the messages to
	// %DLQ%<group> in the middle of the test.
	srv.SetMaxDeliveryAttempts("g-"+run+"-dlq-reader", 1000)
	p, err := rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmq.Connection{Endpoint: srv.Endpoint(), ClientLogDir: t.TempDir()}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	seed(p, "dlq-"+run)
	_ = p.Close(ctx)
	rmq := CrashBroker{Name: "rocketmq", Kills: 3, Dest: "dest-" + run,
		PeekDest: []string{"dlq", "peek", "rocketmq://dest-" + run + "?group=check-" + run, "--rocketmq-endpoint", srv.Endpoint(), "-o", "json", "--wait", "1s"},
		File: WriteYAML(t, fmt.Sprintf("connections:\n  rocketmq:\n    endpoint: %s\nsubscriptions:\n", srv.Endpoint())+
			"  - name: orders\n    transport: rocketmq\n    channelName: orders-"+run+"\n    rocketmq: {consumerGroup: g-"+run+"}\n    deadLetterRoutingKey: dlq-"+run+"\n    handler: {type: builtin, name: ack}\n")}

	client, gsrv := gcptest.Start(t, "crash", nil, gcp.Connect)
	pj := gsrv.Project
	for _, name := range []string{"orders-dlq", "orders", "dest"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + pj + "/topics/" + name}); err != nil {
			t.Fatal(err)
		}
	}
	for sub, topic := range map[string]string{"orders-dlq": "orders-dlq", "dest-sub": "dest"} {
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name: "projects/" + pj + "/subscriptions/" + sub, Topic: "projects/" + pj + "/topics/" + topic, AckDeadlineSeconds: 10,
		}); err != nil {
			t.Fatal(err)
		}
	}
	seed(gcp.NewProducer(client, gcp.ProducerOptions{}), "orders-dlq")
	ps := CrashBroker{Name: "gcp", Kills: 1, Dest: "dest",
		PeekDest: []string{"dlq", "peek", "pubsub://projects/" + pj + "/subscriptions/dest-sub", "--endpoint", gsrv.Addr, "-o", "json", "--wait", "1s"},
		File: WriteYAML(t, fmt.Sprintf("connections:\n  gcp:\n    projectId: %s\n    emulatorHost: %s\nsubscriptions:\n", pj, gsrv.Addr)+
			"  - name: orders\n    transport: gcp\n    routingKey: orders\n    channelName: orders-sub\n    deadLetterRoutingKey: orders-dlq\n    handler: {type: builtin, name: ack}\n")}
	return []CrashBroker{rmq, ps}
}

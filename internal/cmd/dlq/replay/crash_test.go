package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
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

// crashQueue makes an SQS queue on fauxqs holding n routed copies (c0 ..
// c<n-1>) and a destination queue; it returns their names and the flags
// that reach them.
func crashQueue(t *testing.T, n int) (dlq, dest string, conn []string) {
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

// crashIDs reads the message ids of JSON lines (an archive, peek -o json).
func crashIDs(t *testing.T, data []byte) map[string]int {
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

// sigkillAfter starts `brighter ARGS`, SIGKILLs it after d, and waits for it.
func sigkillAfter(t *testing.T, d time.Duration, args ...string) {
	t.Helper()
	cmd := crashCmd(t, args...)
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

// crashPeekIDs is crashAwaitAll over the SQS queue (fauxqs, flags conn).
func crashPeekIDs(t *testing.T, queue string, conn []string, n int, also map[string]int) map[string]int {
	t.Helper()
	return crashAwaitAll(t, append([]string{"dlq", "peek", "sqs://" + queue, "-o", "json", "--wait", "1s"}, conn...), n, also)
}

// TestDLQ_ArchiveSIGKILL_NeverNowhere: dlq archive killed with
// SIGKILL at random instants, three times in a row appending to one file:
// every message is in the DLQ or in the archive (or both), never nowhere;
// a last, unkilled archive empties the DLQ into the file.
func TestDLQ_ArchiveSIGKILL_NeverNowhere(t *testing.T) {
	t.Parallel() // its own queues; `brighter` processes and waits for a visibility timeout
	const n = 1000
	dlq, _, conn := crashQueue(t, n)
	file := filepath.Join(t.TempDir(), "archive.jsonl")
	args := append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", file, "--visibility", "2s", "--wait", "1s"}, conn...)
	for range 3 {
		sigkillAfter(t, time.Duration(20+rand.IntN(600))*time.Millisecond, args...)
		data, _ := os.ReadFile(file)
		archived := crashIDs(t, data)
		t.Logf("%d of %d in the archive after the kill", len(archived), n)
		crashPeekIDs(t, dlq, conn, n, archived)
	}
	last := crashCmd(t, args...)
	last.Env = cmdtest.Env()
	if out, err := last.CombinedOutput(); err != nil {
		t.Fatalf("the last archive: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(file)
	got := crashIDs(t, data)
	for i := range n {
		if got[fmt.Sprintf("c%d", i)] == 0 {
			t.Errorf("c%d is not in the archive", i)
		}
	}
	if left := crashPeekIDs(t, dlq, conn, n, got); len(left) != 0 {
		t.Fatalf("the DLQ still holds %v after a complete archive", left)
	}
}

// TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter: dlq replay --copy
// killed with SIGKILL at random instants never removes a dead letter:
// every message is still in the DLQ once the killed run's hold lapses.
func TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter(t *testing.T) {
	t.Parallel() // its own queues; `brighter` processes and waits for a visibility timeout
	const n = 1000
	dlq, dest, conn := crashQueue(t, n)
	args := append([]string{"dlq", "replay", "sqs://" + dlq, "--copy", "--yes", "--to", dest, "--visibility", "2s", "--wait", "1s"}, conn...)
	for range 3 {
		sigkillAfter(t, time.Duration(20+rand.IntN(600))*time.Millisecond, args...)
		crashPeekIDs(t, dlq, conn, n, nil)
	}
}

// TestDLQ_EditSIGKILL_NeverNowhere: dlq edit killed with SIGKILL at
// random instants while it reads, publishes the edited copy and removes
// the original: each message is in the DLQ, or its edited copy (with
// originalBodySha256) at its destination, or both, never nowhere; an
// unkilled edit afterwards moves what is left.
func TestDLQ_EditSIGKILL_NeverNowhere(t *testing.T) {
	t.Parallel() // its own queues; `brighter` processes and waits for a visibility timeout
	const n = 8
	dlq, dest, conn := crashQueue(t, n)
	body := filepath.Join(t.TempDir(), "fixed.json")
	if err := os.WriteFile(body, []byte(`{"fixed":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	edit := func(i int) []string {
		return append([]string{"dlq", "edit", fmt.Sprintf("c%d", i), "sqs://" + dlq, "--to", dest, "--body-file", body, "--visibility", "2s", "--wait", "1s"}, conn...)
	}
	destIDs := func() map[string]int {
		out, err := crashCmd(t, append([]string{"dlq", "peek", "sqs://" + dest, "-o", "json", "--wait", "1s"}, conn...)...).Output()
		if err != nil {
			t.Fatalf("peek %s: %v", dest, err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			if len(line) > 0 && !bytes.Contains(line, []byte(`"originalBodySha256":"`)) {
				t.Errorf("a message at the destination is not an edited copy: %s", line)
			}
		}
		return crashIDs(t, out)
	}
	for i := range n {
		sigkillAfter(t, time.Duration(50+rand.IntN(1500))*time.Millisecond, edit(i)...)
		at := destIDs()
		t.Logf("c%d killed: %d edited copies at the destination", i, len(at))
		crashPeekIDs(t, dlq, conn, n, at)
	}
	for i := range n {
		if out, err := crashCmd(t, edit(i)...).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("is not in")) {
			t.Fatalf("edit c%d after the kills: %v\n%s", i, err, out)
		}
	}
	got := destIDs()
	for i := range n {
		if got[fmt.Sprintf("c%d", i)] == 0 {
			t.Errorf("c%d's edited copy is not at %s", i, dest)
		}
	}
	if left := crashPeekIDs(t, dlq, conn, 0, nil); len(left) != 0 {
		t.Fatalf("the DLQ still holds %v after every edit", left)
	}
}

// TestDLQ_ReplaySIGKILL_ResumesExactlyOnce: dlq replay (move)
// killed with SIGKILL at random instants, three times, then run to the end
// with the same journal: the dead-letter queue ends empty, every message is
// at the destination, and a message is there twice only when its copy was
// in flight (recorded "sending", not "sent") at one of the kills: what a
// killed run had finished is neither lost nor sent again.
func TestDLQ_ReplaySIGKILL_ResumesExactlyOnce(t *testing.T) {
	t.Parallel() // its own queues; `brighter` processes and waits for a visibility timeout
	const n = 1000
	dlq, dest, conn := crashQueue(t, n)
	journal := filepath.Join(t.TempDir(), "replay.journal")
	// --rate spreads the run over about 2.5s, so each kill lands mid-run.
	args := append([]string{"dlq", "replay", "sqs://" + dlq, "--yes", "--to", dest, "--journal", journal, "--rate", "400", "--visibility", "2s", "--wait", "1s"}, conn...)
	inFlight := map[string]bool{} // replay ids in flight at a kill
	for range 3 {
		sigkillAfter(t, time.Duration(50+rand.IntN(550))*time.Millisecond, args...)
		data, _ := os.ReadFile(journal)
		state := map[string]string{}
		for _, line := range strings.Split(string(data), "\n") {
			if kind, rid, ok := strings.Cut(line, " "); ok {
				if kind == "sending" && state[rid] != "" {
					continue
				}
				state[rid] = kind
			}
		}
		for rid, kind := range state {
			if kind == "sending" {
				inFlight[rid] = true
			}
		}
		delivered := crashDestIDs(t, dest, conn)
		t.Logf("after the kill: %d copies at the destination, %d in flight so far", len(delivered), len(inFlight))
		crashPeekIDs(t, dlq, conn, n, delivered)
	}
	out, err := crashCmd(t, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("the last replay: %v\n%s", err, out)
	}
	t.Logf("the last replay:\n%s", lastLines(string(out), 4))
	if _, err := os.Stat(journal); !os.IsNotExist(err) {
		t.Errorf("the journal %s was kept after a complete replay (stat: %v)", journal, err)
	}
	got := map[string][]string{} // id -> replay ids of its copies
	raw, err := crashCmd(t, append([]string{"dlq", "peek", "sqs://" + dest, "-o", "json", "--wait", "1s"}, conn...)...).Output()
	if err != nil {
		t.Fatalf("peek the destination: %v", err)
	}
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
	dups := 0
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		switch copies := got[id]; {
		case len(copies) == 0:
			t.Errorf("%s is not at the destination", id)
		case len(copies) > 1:
			dups++
			if !inFlight[copies[0]] {
				t.Errorf("%s is at the destination %d times, but its copy was not in flight at any kill (replay id %s)", id, len(copies), copies[0])
			}
		}
	}
	t.Logf("%d of %d delivered twice, each in flight at a kill", dups, n)
	if left := crashDestIDs(t, dlq, conn); len(left) != 0 {
		t.Fatalf("the DLQ still holds %d messages after a complete replay", len(left))
	}
}

// crashDestIDs reads the ids of a queue once (peek -o json).
func crashDestIDs(t *testing.T, queue string, conn []string) map[string]int {
	t.Helper()
	out, err := crashCmd(t, append([]string{"dlq", "peek", "sqs://" + queue, "-o", "json", "--wait", "1s"}, conn...)...).Output()
	if err != nil {
		t.Fatalf("peek %s: %v", queue, err)
	}
	return crashIDs(t, out)
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// crashCmd is `brighter args...` with fauxqs's static credentials
// (scaleOutEnv): the crash tests run in parallel, so none sets them in the
// test process's own environment.
func crashCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(cmdtest.Bin(t), args...)
	cmd.Env = cmdtest.Env()
	return cmd
}

// crashAwaitAll waits (with a deadline) until every id c0..c<n-1> is read
// by `brighter peekArgs` (a dlq peek -o json) or is in also; it fails naming
// the ids that are nowhere, and returns what the peek read.
func crashAwaitAll(t *testing.T, peekArgs []string, n int, also map[string]int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := crashCmd(t, peekArgs...).Output()
		if err != nil {
			t.Fatalf("peek: %v", err)
		}
		got := crashIDs(t, out)
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

// crashBroker is a dead-letter destination of n routed copies (c0 ..
// c<n-1>) on another transport than SQS, for the SIGKILL tests: a
// subscription "orders" in file whose dead-letter destination holds them,
// and a topic "dest" (its name in dest) a replay may publish to.
type crashBroker struct {
	name string
	// kills is how many SIGKILLs a test may land: Google's emulator may
	// stop redelivering a message whose ack deadline lapsed more than once
	// or twice (docs/emulators.md, Google's Pub/Sub emulator), so there a test kills once.
	kills int
	file  string
	dest  string
	// peekDest reads dest (dlq peek args, -o json).
	peekDest []string
}

// crashBrokers makes the RocketMQ test broker's and Google's Pub/Sub
// emulator's crashBroker, each holding n routed copies.
func crashBrokers(t *testing.T, n int) []crashBroker {
	t.Helper()
	ctx := context.Background()
	run := fmt.Sprintf("ak%d", time.Now().UnixNano()%1e9)
	seed := func(p broker.Producer, dlq string) {
		for i := range n {
			if err := p.Send(ctx, stamped(fmt.Sprintf("c%d", i), "orders", dlq)); err != nil {
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
	p, err := rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmq.Connection{Endpoint: srv.Endpoint(), ClientLogDir: t.TempDir()}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	seed(p, "dlq-"+run)
	_ = p.Close(ctx)
	rmq := crashBroker{name: "rocketmq", kills: 3, dest: "dest-" + run,
		peekDest: []string{"dlq", "peek", "rocketmq://dest-" + run + "?group=check-" + run, "--rocketmq-endpoint", srv.Endpoint(), "-o", "json", "--wait", "1s"},
		file: writeYAML(t, fmt.Sprintf("connections:\n  rocketmq:\n    endpoint: %s\nsubscriptions:\n", srv.Endpoint())+
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
	ps := crashBroker{name: "gcp", kills: 1, dest: "dest",
		peekDest: []string{"dlq", "peek", "pubsub://projects/" + pj + "/subscriptions/dest-sub", "--endpoint", gsrv.Addr, "-o", "json", "--wait", "1s"},
		file: writeYAML(t, fmt.Sprintf("connections:\n  gcp:\n    projectId: %s\n    emulatorHost: %s\nsubscriptions:\n", pj, gsrv.Addr)+
			"  - name: orders\n    transport: gcp\n    routingKey: orders\n    channelName: orders-sub\n    deadLetterRoutingKey: orders-dlq\n    handler: {type: builtin, name: ack}\n")}
	return []crashBroker{rmq, ps}
}

// TestDLQ_ArchiveSIGKILL_NeverNowhere_PubSubAndRocketMQ: dlq
// archive killed with SIGKILL at a random instant on the RocketMQ test
// broker (three kills, messages held for --visibility) and on Google's
// Pub/Sub emulator (one kill: a killed pull's messages come back when the
// subscription's 10 s ack deadline lapses): every message is in the
// dead-letter destination or in the archive, never nowhere; unkilled
// archives then empty the destination into the file.
func TestDLQ_ArchiveSIGKILL_NeverNowhere_PubSubAndRocketMQ(t *testing.T) {
	t.Parallel() // destinations of its own; `brighter` processes and waits for leases
	const n = 600
	for _, b := range crashBrokers(t, n) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			archive := filepath.Join(t.TempDir(), "archive.jsonl")
			args := []string{"dlq", "archive", "orders", "-c", b.file, "--all", "--file", archive, "--visibility", "2s", "--wait", "1s"}
			peek := []string{"dlq", "peek", "orders", "-c", b.file, "-o", "json", "--wait", "1s"}
			for range b.kills {
				sigkillAfter(t, time.Duration(50+rand.IntN(550))*time.Millisecond, args...)
				data, _ := os.ReadFile(archive)
				archived := crashIDs(t, data)
				t.Logf("%d of %d in the archive after the kill", len(archived), n)
				crashAwaitAll(t, peek, n, archived)
			}
			// Unkilled archives until the destination reads empty: what the
			// killed run held (archived, not yet removed) comes back when its
			// hold lapses and goes into the file a second time.
			deadline := time.Now().Add(60 * time.Second)
			for {
				if out, err := crashCmd(t, args...).CombinedOutput(); err != nil {
					t.Fatalf("an unkilled archive: %v\n%s", err, out)
				}
				out, err := crashCmd(t, peek...).Output()
				if err != nil {
					t.Fatalf("peek: %v", err)
				}
				left := crashIDs(t, out)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the dead-letter destination still holds %d messages a minute after the kills", len(left))
				}
			}
			data, _ := os.ReadFile(archive)
			got := crashIDs(t, data)
			for i := range n {
				if got[fmt.Sprintf("c%d", i)] == 0 {
					t.Errorf("c%d is not in the archive", i)
				}
			}
		})
	}
}

// TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter_PubSubAndRocketMQ:
// dlq replay --copy killed with SIGKILL at random instants on the RocketMQ
// test broker and Google's Pub/Sub emulator never removes a dead letter:
// every message is back in the dead-letter destination once the killed
// run's hold lapses.
func TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter_PubSubAndRocketMQ(t *testing.T) {
	t.Parallel() // destinations of its own; `brighter` processes and waits for leases
	const n = 600
	for _, b := range crashBrokers(t, n) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"dlq", "replay", "orders", "-c", b.file, "--copy", "--yes", "--to", b.dest, "--visibility", "2s", "--wait", "1s"}
			peek := []string{"dlq", "peek", "orders", "-c", b.file, "-o", "json", "--wait", "1s"}
			for range b.kills {
				sigkillAfter(t, time.Duration(50+rand.IntN(550))*time.Millisecond, args...)
				crashAwaitAll(t, peek, n, nil)
			}
		})
	}
}

// TestDLQ_EditSIGKILL_NeverNowhere_PubSubAndRocketMQ: dlq edit
// killed with SIGKILL at a random instant, once per message, on the
// RocketMQ test broker and Google's Pub/Sub emulator: each message is in
// the dead-letter destination, or its edited copy at the destination, or
// both, never nowhere; unkilled edits afterwards move what is left.
func TestDLQ_EditSIGKILL_NeverNowhere_PubSubAndRocketMQ(t *testing.T) {
	t.Parallel() // destinations of its own; `brighter` processes and waits for leases
	const n = 4
	for _, b := range crashBrokers(t, n) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			body := filepath.Join(t.TempDir(), "fixed.json")
			if err := os.WriteFile(body, []byte(`{"fixed":true}`), 0o600); err != nil {
				t.Fatal(err)
			}
			edit := func(i int) []string {
				return []string{"dlq", "edit", fmt.Sprintf("c%d", i), "orders", "-c", b.file, "--to", b.dest, "--body-file", body, "--visibility", "2s", "--wait", "1s"}
			}
			peek := []string{"dlq", "peek", "orders", "-c", b.file, "-o", "json", "--wait", "1s"}
			// Every copy at the destination is an edited one; the ids seen
			// there accumulate (a read of a Pub/Sub subscription holds what
			// it reads until its ack deadline, so a second read may miss it).
			at := map[string]int{}
			destIDs := func() map[string]int {
				out, err := crashCmd(t, b.peekDest...).Output()
				if err != nil {
					t.Fatalf("peek %s: %v", b.dest, err)
				}
				for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
					if len(line) > 0 && !bytes.Contains(line, []byte(`"originalBodySha256":"`)) {
						t.Errorf("a message at the destination is not an edited copy: %s", line)
					}
				}
				for id := range crashIDs(t, out) {
					at[id]++
				}
				return at
			}
			for i := range n {
				sigkillAfter(t, time.Duration(50+rand.IntN(1500))*time.Millisecond, edit(i)...)
				crashAwaitAll(t, peek, n, destIDs())
			}
			// Unkilled edits until every message has its edited copy at the
			// destination and the dead-letter destination is empty: a
			// message an earlier run (or scan) still holds is "not in" it
			// until the hold lapses, and is edited on a later pass.
			deadline := time.Now().Add(90 * time.Second)
			for {
				out, err := crashCmd(t, peek...).Output()
				if err != nil {
					t.Fatalf("peek: %v", err)
				}
				left, got := crashIDs(t, out), destIDs()
				var pending []int
				for i := range n {
					if id := fmt.Sprintf("c%d", i); got[id] == 0 || left[id] > 0 {
						pending = append(pending, i)
					}
				}
				if len(pending) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("90s after the kills: edited copies at %s %v, still in the dead-letter destination %v", b.dest, got, left)
				}
				for _, i := range pending {
					if out, err := crashCmd(t, edit(i)...).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("is not in")) {
						t.Fatalf("edit c%d after the kills: %v\n%s", i, err, out)
					}
				}
				time.Sleep(500 * time.Millisecond)
			}
		})
	}
}

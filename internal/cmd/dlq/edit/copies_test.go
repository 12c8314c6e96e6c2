package edit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// fixedBody writes the body an edit takes (--body-file) and returns its
// path.
func fixedBody(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fixed.json")
	if err := os.WriteFile(p, []byte(`{"edited":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// stored sends a dead-lettered copy of id into dlq: rejected at at from
// topic, with body and bag entries.
func stored(t *testing.T, p broker.Producer, dlq, id, topic, body string, at time.Time, bag map[string]string) {
	t.Helper()
	m := message.New(id, topic, message.MTCommand, []byte(body))
	for k, v := range bag {
		m.Header.Bag[k] = v
	}
	if err := p.Send(context.Background(), message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, at)); err != nil {
		t.Fatal(err)
	}
}

// editedEveryCopy runs `dlq edit` with args, which edit m1 in src where it
// is stored three times (twice as one failure from d1, once from d2),
// failing the test unless it exits 0, and reports an error unless stdout
// lists the three copies (d1's second one removed, not sent again) and
// stderr says the edit is applied to each.
func editedEveryCopy(t *testing.T, args []string, src, d1, d2 string) {
	t.Helper()
	code, out, errOut := dlqtest.DLQRun(t, args...)
	if code != cmdutil.ExitOK {
		t.Fatalf("edit of an id stored three times: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"edit m1: found 3 stored copies; replayed 3\n", "replayed m1 -> " + d2 + "\n",
		"replayed m1 -> " + d1 + " (another copy of the same failure; removed, not sent again)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "replayed m1 -> "+d1) != 2 {
		t.Errorf("stdout does not list both copies of the d1 failure:\n%s", out)
	}
	if !strings.Contains(errOut, "3 stored copies in "+src) || !strings.Contains(errOut, "the edit is applied to each") {
		t.Errorf("stderr does not say the edit goes to every copy:\n%s", errOut)
	}
}

// TestDLQEdit_EveryCopyStoredBeforeIsEdited: message m1 is stored three
// times in the dead-letter queue before the edit (fauxqs): twice as one
// failure from queue d1 (same rejection time: a duplicate delivery), once
// as a failure of its own from d2 (two subscriptions sharing the
// dead-letter queue). `dlq edit m1 --body-file F` says it found three
// copies and applies the edit to each, as dlq replay replays them: d1 gets
// one edited copy (the second copy of that failure is removed, not sent
// again), d2 gets one, exit 0, and the dead-letter queue keeps only m2.
func TestDLQEdit_EveryCopyStoredBeforeIsEdited(t *testing.T) {
	t.Parallel()
	run, p, conn := dlqtest.FauxqsQueues(t, "edcp", "dlq", "d1", "d2")
	dlq, d1, d2 := "dlq-"+run, "d1-"+run, "d2-"+run
	at := time.Now().Add(-time.Minute)
	stored(t, p, dlq, "m1", d1, `{"n":1}`, at, nil)
	stored(t, p, dlq, "m1", d1, `{"n":1}`, at, nil)
	stored(t, p, dlq, "m1", d2, `{"n":1}`, at.Add(time.Second), nil)
	stored(t, p, dlq, "m2", d1, `{"n":2}`, at, nil)

	editedEveryCopy(t, append([]string{"edit", "m1", "sqs://" + dlq, "--allow-any-destination", "--body-file", fixedBody(t), "--journal", "", "--wait", "1s"}, conn...), "sqs://"+dlq, d1, d2)
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 1 || left["m2"] != 1 {
		t.Errorf("the dead-letter queue holds %v, want m2 only", left)
	}
	for _, q := range []string{d1, d2} {
		_, got, _ := dlqtest.DLQRun(t, append([]string{"peek", "sqs://" + q, "-o", "json", "--wait", "1s"}, conn...)...)
		if strings.Count(got, `"id":"m1"`) != 1 || !strings.Contains(got, `"body":"{\"edited\":true}"`) {
			t.Errorf("%s holds, want one edited copy of m1:\n%s", q, got)
		}
	}
}

// TestDLQEdit_CopiesThatDifferAreRefused: two stored copies of m1 whose
// bodies differ cannot take one edit: `dlq edit m1` is refused before
// anything is edited or sent (exit 2), naming each copy (rejection time,
// originalTopic, body hash) and how to pick one; both stay. --topic picks
// one: it alone is edited, the message says the other stays, and it does.
// Copies with one body whose bags differ take a body edit, but not an
// edit of the headers (--set): exit 2, nothing sent (fauxqs).
func TestDLQEdit_CopiesThatDifferAreRefused(t *testing.T) {
	t.Parallel()
	run, p, conn := dlqtest.FauxqsQueues(t, "eddf", "dlq", "d1", "d2")
	dlq, d1, d2 := "dlq-"+run, "d1-"+run, "d2-"+run
	at := time.Now().Add(-time.Minute)
	stored(t, p, dlq, "m1", d1, `{"n":1}`, at, nil)
	stored(t, p, dlq, "m1", d2, `{"n":"one"}`, at.Add(time.Second), nil)
	edit := func(more ...string) (int, string, string) {
		args := append([]string{"edit", "m1", "sqs://" + dlq, "--allow-any-destination", "--body-file", fixedBody(t), "--journal", "", "--wait", "1s"}, conn...)
		return dlqtest.DLQRun(t, append(args, more...)...)
	}

	code, out, errOut := edit()
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "message m1 has 2 stored copies in sqs://"+dlq+" whose bodies differ") ||
		!strings.Contains(errOut, "copy 1: rejected ") || !strings.Contains(errOut, `from "`+d2+`"`) || !strings.Contains(errOut, "--topic") ||
		!strings.Contains(errOut, "nothing was edited or sent") {
		t.Fatalf("edit of two different copies: exit %d, want %d naming both\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); left["m1"] != 2 {
		t.Fatalf("after the refusal the dead-letter queue holds %v, want both copies of m1", left)
	}
	for _, q := range []string{d1, d2} {
		if got := dlqtest.CrashDestIDs(t, q, conn); len(got) != 0 {
			t.Fatalf("the refused edit sent %v to %s", got, q)
		}
	}

	code, out, errOut = edit("--topic", d2)
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed m1 -> "+d2+"\n") || !strings.Contains(out, "edit m1: found and replayed\n") ||
		!strings.Contains(errOut, "1 other copy of it the filters do not select stays where it is") {
		t.Fatalf("edit --topic %s: exit %d\nstdout:\n%s\nstderr:\n%s", d2, code, out, errOut)
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 1 || left["m1"] != 1 {
		t.Errorf("after the edit of one copy the dead-letter queue holds %v, want the other copy of m1", left)
	}
	if got := dlqtest.CrashDestIDs(t, d1, conn); len(got) != 0 {
		t.Errorf("the copy --topic did not pick was sent: %v", got)
	}

	stored(t, p, dlq, "m3", d1, `{"n":3}`, at, map[string]string{"tenant": "a"})
	stored(t, p, dlq, "m3", d1, `{"n":3}`, at.Add(time.Second), map[string]string{"tenant": "b"})
	args := append([]string{"edit", "m3", "sqs://" + dlq, "--allow-any-destination", "--body-file", fixedBody(t), "--journal", "", "--wait", "1s", "--set", "fixedBy=ops"}, conn...)
	code, out, errOut = dlqtest.DLQRun(t, args...)
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, `whose headers differ ("bag.tenant")`) {
		t.Fatalf("--set on copies whose bags differ: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	if got := dlqtest.CrashDestIDs(t, d1, conn); len(got) != 0 {
		t.Fatalf("the refused header edit sent %v", got)
	}
}

// TestDLQEdit_CopyComingBackIsLeftCountedAndFails: a consumer beside the
// edit dead-letters the edited copy straight back (fauxqs). The copy that
// came back while the edit ran is not edited again: it is listed left,
// counted in the summary, and the edit exits 1 saying it is still in the
// dead-letter queue, as dlq replay does.
func TestDLQEdit_CopyComingBackIsLeftCountedAndFails(t *testing.T) {
	t.Parallel()
	run, p, conn := dlqtest.FauxqsQueues(t, "edbk", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	stored(t, p, dlq, "m1", dest, `{}`, time.Now().Add(-time.Minute), nil)
	defer dlqtest.DeadLetterAgain(t, dest, dlq)()
	code, out, errOut := dlqtest.DLQRun(t, append([]string{"edit", "m1", "sqs://" + dlq, "--to", dest, "--body-file", fixedBody(t), "--journal", "", "--wait", "3s"}, conn...)...)
	if code != cmdutil.ExitFailure || !strings.Contains(out, "left m1: dead-lettered again while this replay ran") ||
		!strings.Contains(out, "edit m1: found 1 stored copy; replayed 1, left 1 (dead-lettered again while the edit ran)") ||
		!strings.Contains(errOut, "1 message dead-lettered again while the replay ran; it is still in the dead-letter destination") {
		t.Fatalf("edit beside a consumer that dead-letters the copy again: exit %d, want %d with the copy left\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitFailure, out, errOut)
	}
}

// TestDLQEdit_PubSubTwoFailuresOfOneID_BothEdited: two subscriptions
// sharing a dead-letter topic both dead-lettered m1 before the edit
// (Google's emulator): `dlq edit m1 --to events -o json` edits and
// replays both (two replayed records, the summary's replayed 2, left 0),
// exit 0; events-sub gets m1 twice, each with the edited body, and the
// dead-letter subscription is empty.
func TestDLQEdit_PubSubTwoFailuresOfOneID_BothEdited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, srv, subName := dlqtest.PubSubTopics(t, "edtwice", []string{"events", "shared-dlq"},
		map[string]string{"events-sub": "events", "shared-dlq": "shared-dlq"})
	p := gcp.NewProducer(client, gcp.ProducerOptions{})
	now := time.Now()
	for _, at := range []time.Time{now.Add(-2 * time.Second), now.Add(-time.Second)} {
		m := message.New("m1", "events", message.MTCommand, []byte(`{}`))
		if err := p.Send(ctx, message.Stamp(m, "shared-dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, at)); err != nil {
			t.Fatal(err)
		}
	}
	url := func(sub string) string { return "pubsub://" + subName(sub) }
	code, out, errOut := dlqtest.DLQRun(t, "edit", "m1", url("shared-dlq"), "--endpoint", srv.Addr, "--to", "events", "--body-file", fixedBody(t), "--journal", "", "-o", "json")
	if code != cmdutil.ExitOK || strings.Count(out, `{"type":"message","id":"m1","destination":"events","outcome":"replayed"}`) != 2 ||
		!strings.Contains(out, `"replayed":2,"skipped":0,"failed":0,"refused":0,"left":0,`) || !strings.Contains(errOut, "2 stored copies") {
		t.Fatalf("edit of two failures of m1 stored before the run: exit %d, want both edited\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code, out, errOut := dlqtest.DLQRun(t, "peek", url("shared-dlq"), "--endpoint", srv.Addr, "-o", "json"); code != cmdutil.ExitOK || out != "" {
		t.Fatalf("the dead-letter subscription after the edit: exit %d, holds\n%s%s", code, out, errOut)
	}
	code, out, errOut = dlqtest.DLQRun(t, "peek", url("events-sub"), "--endpoint", srv.Addr, "-o", "json")
	if code != cmdutil.ExitOK || strings.Count(out, `"id":"m1"`) != 2 || strings.Count(out, `"body":"{\"edited\":true}"`) != 2 {
		t.Fatalf("events-sub after the edit: exit %d, want m1 twice, edited\n%s%s", code, out, errOut)
	}
}

// copiesBroker is a dead-letter destination on a transport other than SQS
// for TestDLQEdit_EveryCopyStoredBeforeIsEdited_PubSubAndRocketMQ: a
// producer that sends to a topic by name, the URL of the dead-letter
// destination (src) and of what reads each destination topic, and the
// flags that reach the broker.
type copiesBroker struct {
	name  string
	p     broker.Producer
	src   string
	read  func(topic string) string
	flags []string
}

// TestDLQEdit_EveryCopyStoredBeforeIsEdited_PubSubAndRocketMQ is
// TestDLQEdit_EveryCopyStoredBeforeIsEdited on Google's emulator and the
// RocketMQ test broker: m1 stored three times (twice as one failure from
// d1, once as a failure of its own from d2) and m2 once. `dlq edit m1
// --body-file F --set fixedBy=ops` says it found three copies and applies
// the edit to each: d1 gets one edited copy (the other copy of that
// failure is removed, not sent again), d2 gets one, each under its fresh
// replayId (inspect.ReplayID of its failure and the source: never one
// replayId for both failures, or the second would be taken as sent and
// dropped), exit 0, and the dead-letter destination keeps only m2.
func TestDLQEdit_EveryCopyStoredBeforeIsEdited_PubSubAndRocketMQ(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run := fmt.Sprintf("edcp%d", time.Now().UnixNano()%1e9)
	dlq, d1, d2 := "dlq-"+run, "d1-"+run, "d2-"+run

	client, srv, subName := dlqtest.PubSubTopics(t, "edcopies", []string{dlq, d1, d2},
		map[string]string{dlq: dlq, d1 + "-sub": d1, d2 + "-sub": d2})
	pubsubCase := copiesBroker{name: "pubsub", p: gcp.NewProducer(client, gcp.ProducerOptions{}), src: "pubsub://" + subName(dlq),
		read: func(topic string) string { return "pubsub://" + subName(topic+"-sub") }, flags: []string{"--endpoint", srv.Addr}}

	rocketmq.ConfigureClientLog(t.TempDir())
	rsrv, err := rmqtest.Start(rmqtest.Options{AutoCreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rsrv.Close)
	// Every read is a delivery for the reader group: a high retry maximum,
	// as the dlq page asks of a real broker, keeps the scans' reads from
	// moving the messages to %DLQ%<group>.
	reader := "g-" + run + "-reader"
	rsrv.SetMaxDeliveryAttempts(reader, 1000)
	rp, err := rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmq.Connection{Endpoint: rsrv.Endpoint(), ClientLogDir: t.TempDir()}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rp.Close(ctx) })
	rmqCase := copiesBroker{name: "rocketmq", p: rp, src: "rocketmq://" + dlq + "?group=" + reader,
		read:  func(topic string) string { return "rocketmq://" + topic + "?group=check-" + topic },
		flags: []string{"--rocketmq-endpoint", rsrv.Endpoint(), "--fan-out"}}

	for _, b := range []copiesBroker{pubsubCase, rmqCase} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
			send := func(id, topic, body string, at time.Time) *message.Message {
				m := message.Stamp(message.New(id, topic, message.MTCommand, []byte(body)), dlq,
					message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, at)
				if err := b.p.Send(ctx, m); err != nil {
					t.Fatal(err)
				}
				return m
			}
			fromD1 := send("m1", d1, `{"n":1}`, at)
			send("m1", d1, `{"n":1}`, at)
			fromD2 := send("m1", d2, `{"n":1}`, at.Add(time.Second))
			send("m2", d1, `{"n":2}`, at)
			peek := func(url string) string {
				t.Helper()
				code, out, errOut := dlqtest.DLQRun(t, append([]string{"peek", url, "-o", "json", "--wait", "2s"}, b.flags[:2]...)...)
				if code != cmdutil.ExitOK {
					t.Fatalf("peek %s: exit %d\n%s%s", url, code, out, errOut)
				}
				return out
			}

			args := append([]string{"edit", "m1", b.src, "--allow-any-destination", "--body-file", fixedBody(t), "--set", "fixedBy=ops", "--journal", "", "--wait", "2s"}, b.flags...)
			editedEveryCopy(t, args, b.src, d1, d2)
			if left := peek(b.src); strings.Count(left, `"id":"m2"`) != 1 || strings.Contains(left, `"id":"m1"`) {
				t.Errorf("the dead-letter destination holds, want m2 only:\n%s", left)
			}
			for topic, m := range map[string]*message.Message{d1: fromD1, d2: fromD2} {
				got := peek(b.read(topic))
				rid := inspect.ReplayID(m, b.src)
				if strings.Count(got, `"id":"m1"`) != 1 || !strings.Contains(got, `"body":"{\"edited\":true}"`) || !strings.Contains(got, `"fixedBy":"ops"`) {
					t.Errorf("%s holds, want one edited copy of m1:\n%s", topic, got)
				}
				if !strings.Contains(got, `"replayId":"`+rid+`"`) {
					t.Errorf("the edited copy at %s does not carry the fresh replayId %s of its failure:\n%s", topic, rid, got)
				}
			}
		})
	}
}

package consume_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// sqsWire records what the soak's consumers and the SQS emulator said to
// each other about receipts, as the HTTP proxy in front of the emulator
// saw it: every message a ReceiveMessage answer handed out (its receipt
// handle, the emulator's message id, the raw JSON of the message), and
// every delete and visibility change (the receipts it named, when it
// arrived and was answered, the answer's status). A report row that must
// be explained prints the broker's side of the message from it
// (explain): an acknowledgement the broker took after it had handed the
// message out again shows as a delete of an older receipt answered after
// a later one was handed out.
type sqsWire struct {
	mu         sync.Mutex
	deliveries []sqsWireDelivery
	settles    []sqsWireSettle
}

// sqsWireDelivery is one message a ReceiveMessage answer handed out.
type sqsWireDelivery struct {
	at              time.Time
	sqsID, receipt  string
	raw             string // the message's JSON as answered: its body and attributes name the Brighter message id
	receiveArrived  time.Time
	receiveAnswered time.Time
}

// sqsWireSettle is one DeleteMessage(Batch) or ChangeMessageVisibility(Batch)
// call: its receipts (and each entry's visibility timeout, seconds), when it
// arrived and was answered, and the answer's status.
type sqsWireSettle struct {
	op                string
	receipts          []string
	visibility        []int
	arrived, answered time.Time
	status            int
}

// wrap returns next with every call recorded in w.
func (w *sqsWire) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
		switch op {
		case "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch":
		default:
			next.ServeHTTP(rw, r)
			return
		}
		arrived := time.Now()
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recordingWriter{ResponseWriter: rw, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		answered := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		if op == "ReceiveMessage" {
			var out struct {
				Messages []json.RawMessage
			}
			if rec.Header().Get("Content-Encoding") != "" || json.Unmarshal(rec.body.Bytes(), &out) != nil {
				return
			}
			for _, raw := range out.Messages {
				var m struct{ MessageId, ReceiptHandle string }
				_ = json.Unmarshal(raw, &m)
				w.deliveries = append(w.deliveries, sqsWireDelivery{at: answered, sqsID: m.MessageId, receipt: m.ReceiptHandle, raw: string(raw), receiveArrived: arrived, receiveAnswered: answered})
			}
			return
		}
		var in struct {
			ReceiptHandle     string
			VisibilityTimeout *int
			Entries           []struct {
				ReceiptHandle     string
				VisibilityTimeout *int
			}
		}
		_ = json.Unmarshal(body, &in)
		s := sqsWireSettle{op: op, arrived: arrived, answered: answered, status: rec.status}
		add := func(receipt string, vis *int) {
			s.receipts = append(s.receipts, receipt)
			v := -1
			if vis != nil {
				v = *vis
			}
			s.visibility = append(s.visibility, v)
		}
		if in.ReceiptHandle != "" {
			add(in.ReceiptHandle, in.VisibilityTimeout)
		}
		for _, e := range in.Entries {
			add(e.ReceiptHandle, e.VisibilityTimeout)
		}
		w.settles = append(w.settles, s)
	})
}

// explain describes, in time order, each delivery of the message whose
// Brighter id is id and every delete or visibility change naming one of
// its receipts.
func (w *sqsWire) explain(id string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	receipts := map[string]int{} // receipt -> delivery number, from 1
	for _, d := range w.deliveries {
		if !strings.Contains(d.raw, id) {
			continue
		}
		receipts[d.receipt] = len(receipts) + 1
		lines = append(lines, line{d.at, fmt.Sprintf("%s handed out as receipt #%d (%s; its ReceiveMessage arrived %s)", d.at.Format("15:04:05.000"), receipts[d.receipt], d.sqsID, d.receiveArrived.Format("15:04:05.000"))})
	}
	for _, s := range w.settles {
		for i, rh := range s.receipts {
			n, ok := receipts[rh]
			if !ok {
				continue
			}
			what := s.op
			if s.visibility[i] >= 0 {
				what += fmt.Sprintf(" to %ds", s.visibility[i])
			}
			lines = append(lines, line{s.arrived, fmt.Sprintf("%s %s of receipt #%d, answered %s with %d", s.arrived.Format("15:04:05.000"), what, n, s.answered.Format("15:04:05.000"), s.status)})
		}
	}
	if len(lines) == 0 {
		return "no delivery of it seen on the wire\n"
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].at.Before(lines[j].at) })
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("\n    " + l.text)
	}
	b.WriteString("\n")
	return b.String()
}

// recordingWriter keeps a response's status and body as it is written.
type recordingWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recordingWriter) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	r.body.Write(p)
	return r.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the writer underneath (the
// reverse proxy flushes through it).
func (r *recordingWriter) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// The soak's wire trace explains a message by what passed the proxy: on
// fauxqs, a message received twice (its first receipt's visibility set to
// 0) and deleted with its first receipt, then its second, is described as
// two hand-outs, the visibility change and both deletes naming their
// receipts, in order; a message it never saw is said to be unseen.
func TestSQSWireTraceExplainsAMessage(t *testing.T) {
	t.Parallel()
	emu := cmdtest.SharedSQS(t)
	trace := &sqsWire{}
	endpoint := refusingSQS(t, emu.Endpoint, "/never", &atomic.Bool{}, trace)
	cfg := sqstest.Config()
	c := awssqs.NewFromConfig(cfg, func(o *awssqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
	ctx := t.Context()
	q, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("wire-%d", time.Now().UnixNano()))})
	if err != nil {
		t.Fatal(err)
	}
	const id = "wire-trace-id-1"
	if _, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(`{"id":"` + id + `"}`)}); err != nil {
		t.Fatal(err)
	}
	receive := func() string {
		t.Helper()
		out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 1})
		if err != nil || len(out.Messages) != 1 {
			t.Fatalf("receive: %v, %d messages", err, len(out.Messages))
		}
		return aws.ToString(out.Messages[0].ReceiptHandle)
	}
	first := receive()
	if _, err := c.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: q.QueueUrl, ReceiptHandle: aws.String(first), VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	second := receive()
	for _, rh := range []string{first, second} {
		if _, err := c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: aws.String(rh)}); err != nil {
			t.Fatal(err)
		}
	}
	got := trace.explain(id)
	want := []string{"handed out as receipt #1", "ChangeMessageVisibility to 0s of receipt #1", "handed out as receipt #2", "DeleteMessage of receipt #1, answered", "DeleteMessage of receipt #2, answered"}
	at := 0
	for _, w := range want {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Fatalf("the trace lacks %q after what came before it:\n%s", w, got)
		}
		at += i + len(w)
	}
	if !strings.Contains(got, "with 200") {
		t.Errorf("the trace does not give the answers' status:\n%s", got)
	}
	if s := trace.explain("some-other-id"); !strings.Contains(s, "no delivery of it seen") {
		t.Errorf("a message never received is explained as %q", s)
	}
}

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
	"time"
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

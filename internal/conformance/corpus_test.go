package conformance

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// corpusCase is one malformed message of the hostile-message corpus: a message
// encoded by Brighter's codec for the scenario, then edited on the wire and
// published raw.
type corpusCase struct {
	name string
	edit func(w *Wire)
	// invalid: the pump routes it as Unacceptable to the invalid-message
	// destination before any dispatch. Otherwise it is handled with
	// defaults, once, and check (if set) says which.
	invalid bool
	// lostID: the case removes the Brighter id, so the message is known by
	// the broker's id (found by its correlation id or body).
	lostID bool
	check  func(t *testing.T, m *message.Message)
}

// Edits.
func del(keys ...string) func(w *Wire) {
	return func(w *Wire) {
		for _, k := range keys {
			delete(w.Attrs, k)
		}
	}
}

func set(kv ...string) func(w *Wire) {
	return func(w *Wire) {
		for i := 0; i+1 < len(kv); i += 2 {
			w.Attrs[kv[i]] = kv[i+1]
		}
	}
}

func body(b []byte) func(w *Wire) { return func(w *Wire) { w.Body = b } }

func both(fs ...func(w *Wire)) func(w *Wire) {
	return func(w *Wire) {
		for _, f := range fs {
			f(w)
		}
	}
}

// sqsBagSet sets a bag key to a raw JSON value.
func sqsBagSet(key, rawJSON string) func(w *Wire) {
	return func(w *Wire) {
		bag := map[string]json.RawMessage{}
		_ = json.Unmarshal([]byte(w.Attrs[sqs.AttrBag]), &bag)
		bag[key] = json.RawMessage(rawJSON)
		b, _ := json.Marshal(bag)
		w.Attrs[sqs.AttrBag] = string(b)
	}
}

// sqsBagDel removes a bag key.
func sqsBagDel(key string) func(w *Wire) {
	return func(w *Wire) {
		bag := map[string]json.RawMessage{}
		_ = json.Unmarshal([]byte(w.Attrs[sqs.AttrBag]), &bag)
		delete(bag, key)
		b, _ := json.Marshal(bag)
		w.Attrs[sqs.AttrBag] = string(b)
	}
}

// Checks of the defaults a handled case presents.
func wantType(mt message.MessageType) func(t *testing.T, m *message.Message) {
	return func(t *testing.T, m *message.Message) {
		if m.Header.MessageType != mt {
			t.Errorf("message type %v, want %v", m.Header.MessageType, mt)
		}
	}
}

func wantCount(n int) func(t *testing.T, m *message.Message) {
	return func(t *testing.T, m *message.Message) {
		if m.Header.HandledCount != n {
			t.Errorf("presented count %d, want %d", m.Header.HandledCount, n)
		}
	}
}

func wantContentType(ct string) func(t *testing.T, m *message.Message) {
	return func(t *testing.T, m *message.Message) {
		if m.Header.ContentType != ct {
			t.Errorf("content type %q, want %q", m.Header.ContentType, ct)
		}
	}
}

func wantRecentTimestamp(t *testing.T, m *message.Message) {
	if d := time.Since(m.Header.Timestamp); m.Header.Timestamp.IsZero() || d < -time.Minute || d > 10*time.Minute {
		t.Errorf("timestamp %v, want a default near now", m.Header.Timestamp)
	}
}

func wantBody(b []byte) func(t *testing.T, m *message.Message) {
	return func(t *testing.T, m *message.Message) {
		if !bytes.Equal(m.Body, b) {
			t.Errorf("body of %d bytes (%q...), want the %d bytes sent", len(m.Body), m.Body[:min(len(m.Body), 20)], len(b))
		}
	}
}

func wantDefaults(t *testing.T, m *message.Message) {
	wantType(message.MTEvent)(t, m)
	wantCount(0)(t, m)
	wantContentType("text/plain")(t, m)
}

var (
	invalidUTF8 = []byte("\xff\xfe\xfd not UTF-8 \xc3\x28")
	oversized   = bytes.Repeat([]byte("x"), 200<<10)
)

// Junk counts every transport refuses (the bound of
// docs/adr/0001-delivery-count-contract.md §9).
var junkCounts = []struct{ name, text string }{
	{"count not a number", "three"},
	{"count negative", "-1"},
	{"count fractional", "2.5"},
	{"count at the limit", "1000000"},
	{"count beyond int64", "9223372036854775808"},
	{"count maxint64", "9223372036854775807"},
}

// Local message types never travel (R-27(b)); MT_UNACCEPTABLE is routed.
var localTypes = []string{"MT_QUIT", "MT_NONE", "MT_UNACCEPTABLE"}

func sqsCorpus() []corpusCase {
	cs := []corpusCase{
		{name: "no attributes at all", edit: func(w *Wire) { w.Attrs = map[string]string{} }, lostID: true, check: wantDefaults},
		{name: "no id", edit: del(sqs.AttrID), lostID: true},
		{name: "no message-type", edit: del(sqs.AttrMessageType), check: wantType(message.MTEvent)},
		{name: "no bag", edit: del(sqs.AttrBag), check: wantCount(0)},
		{name: "no timestamp", edit: del(sqs.AttrTimestamp, sqs.AttrCloudEventHeaders), check: wantRecentTimestamp},
		{name: "no content-type", edit: del(sqs.AttrContentType, sqs.AttrCloudEventHeaders), check: wantContentType("text/plain")},
		{name: "no topic", edit: del(sqs.AttrTopic)},
		{name: "no correlation-id", edit: del(sqs.AttrCorrelationID)},
		{name: "bag not JSON", edit: set(sqs.AttrBag, `{"k":`), invalid: true},
		{name: "bag a JSON array", edit: set(sqs.AttrBag, `[1,2]`), invalid: true},
		{name: "bag a JSON string", edit: set(sqs.AttrBag, `"text"`), invalid: true},
		{name: "bag null", edit: set(sqs.AttrBag, `null`), invalid: true},
		{name: "count a JSON number", edit: sqsBagSet(sqs.BagHandledCount, `2`), check: wantCount(2)},
		{name: "count a JSON object", edit: sqsBagSet(sqs.BagHandledCount, `{"n":1}`), invalid: true},
		{name: "count a huge JSON number", edit: sqsBagSet(sqs.BagHandledCount, `1e300`), invalid: true},
		{name: "handled-count attribute junk, no bag count", edit: both(sqsBagDel(sqs.BagHandledCount), set(sqs.AttrHandledCount, "lots")), invalid: true},
		// The bag's count wins over a top-level attribute, as Brighter reads it.
		{name: "handled-count attribute junk beside the bag count", edit: set(sqs.AttrHandledCount, "lots"), check: wantCount(0)},
		{name: "unknown message type", edit: set(sqs.AttrMessageType, "MT_BANANA"), check: wantType(message.MTEvent)},
		{name: "timestamp not a time", edit: both(set(sqs.AttrTimestamp, "yesterday"), del(sqs.AttrCloudEventHeaders)), check: wantRecentTimestamp},
		{name: "cloudeventheaders not JSON", edit: set(sqs.AttrCloudEventHeaders, `{"time":`)},
		{name: "cloudeventheaders wrong types", edit: set(sqs.AttrCloudEventHeaders, `{"time":5,"souce":[1]}`)},
		{name: "gzip body not base64", edit: set(sqs.AttrContentType, "application/gzip"), invalid: true},
		// SQS carries XML-valid text only (the SDK's checksum refuses
		// anything else): invalid UTF-8 travels base64 under a compressed
		// content type, which the decoder turns back into the bytes.
		{name: "invalid UTF-8 body", edit: both(set(sqs.AttrContentType, "application/gzip"), body([]byte(base64.StdEncoding.EncodeToString(invalidUTF8)))), check: wantBody(invalidUTF8)},
		{name: "oversized body", edit: body(oversized), check: wantBody(oversized)},
		// SQS refuses an empty MessageBody: blank is the nearest.
		{name: "blank body", edit: body([]byte(" ")), check: wantBody([]byte(" "))},
		{name: "forged rejection keys and a junk count", edit: both(sqsBagSet(message.KeyOriginalTopic, `"t"`), sqsBagSet(message.KeyRejectionTimestamp, `"x"`), sqsBagSet(sqs.BagHandledCount, `"-5"`)), invalid: true},
	}
	for _, j := range junkCounts {
		cs = append(cs, corpusCase{name: j.name, edit: sqsBagSet(sqs.BagHandledCount, `"`+j.text+`"`), invalid: true})
	}
	for _, mt := range localTypes {
		cs = append(cs, corpusCase{name: mt, edit: set(sqs.AttrMessageType, mt), invalid: true})
	}
	return cs
}

func pubsubCorpus() []corpusCase {
	cs := []corpusCase{
		{name: "no attributes at all", edit: func(w *Wire) { w.Attrs = map[string]string{} }, lostID: true, check: wantDefaults},
		{name: "no ce-id", edit: del(gcp.AttrID), lostID: true},
		{name: "no MessageType", edit: del(gcp.AttrMessageType), check: wantType(message.MTEvent)},
		{name: "no HandledCount", edit: del(gcp.AttrHandledCount), check: wantCount(0)},
		{name: "no ce-time", edit: del(gcp.AttrTime), check: wantRecentTimestamp},
		{name: "no ce-datacontenttype", edit: del(gcp.AttrContentType), check: wantContentType("text/plain")},
		{name: "no Topic", edit: del(gcp.AttrTopic)},
		{name: "no CorrelationId", edit: del(gcp.AttrCorrelationID)},
		{name: "count with spaces", edit: set(gcp.AttrHandledCount, " 2 "), check: wantCount(2)},
		{name: "unknown message type", edit: set(gcp.AttrMessageType, "MT_BANANA"), check: wantType(message.MTEvent)},
		{name: "ce-time not a time", edit: set(gcp.AttrTime, "yesterday"), check: wantRecentTimestamp},
		{name: "ce-baggage without =", edit: set(gcp.AttrBaggage, "justakey"), invalid: true},
		{name: "ce-specversion junk", edit: set(gcp.AttrSpecVersion, "99")},
		{name: "ce-traceparent junk", edit: set(gcp.AttrTraceParent, "not-a-traceparent")},
		{name: "header attribute in another case", edit: set("handledcount", "junk"), check: wantCount(0)},
		{name: "forged ReceiptHandle", edit: set(gcp.ReceiptHandleKey, "forged-ack-id")},
		{name: "invalid UTF-8 body", edit: body(invalidUTF8), check: wantBody(invalidUTF8)},
		{name: "empty body", edit: body(nil), check: wantBody(nil)},
		{name: "oversized body", edit: body(oversized), check: wantBody(oversized)},
		{name: "forged rejection keys and a junk count", edit: set(message.KeyOriginalTopic, "t", message.KeyRejectionTimestamp, "x", gcp.AttrHandledCount, "-5"), invalid: true},
	}
	for _, j := range junkCounts {
		cs = append(cs, corpusCase{name: j.name, edit: set(gcp.AttrHandledCount, j.text), invalid: true})
	}
	for _, mt := range localTypes {
		cs = append(cs, corpusCase{name: mt, edit: set(gcp.AttrMessageType, mt), invalid: true})
	}
	return cs
}

func rocketCorpus() []corpusCase {
	cs := []corpusCase{
		{name: "no properties at all", edit: func(w *Wire) { w.Attrs = map[string]string{} }, lostID: true, check: wantDefaults},
		{name: "no CE_id", edit: del(rocketmq.PropID), lostID: true},
		{name: "no MessageType", edit: del(rocketmq.PropMessageType), check: wantType(message.MTEvent)},
		{name: "no HandledCount", edit: del(rocketmq.PropHandledCount), check: wantCount(0)},
		{name: "no CE_time", edit: del(rocketmq.PropTime), check: wantRecentTimestamp},
		{name: "no content type", edit: del(rocketmq.PropContentType, rocketmq.PropCEContentType), check: wantContentType("text/plain")},
		{name: "no Topic", edit: del(rocketmq.PropTopic)},
		{name: "no CorrelationId", edit: del(rocketmq.PropCorrelationID)},
		{name: "count with spaces", edit: set(rocketmq.PropHandledCount, " 2 "), check: wantCount(2)},
		{name: "unknown message type", edit: set(rocketmq.PropMessageType, "MT_BANANA"), check: wantType(message.MTEvent)},
		{name: "message type in lower case", edit: set(rocketmq.PropMessageType, "mt_document"), check: wantType(message.MTDocument)},
		{name: "lower-case mt_quit", edit: set(rocketmq.PropMessageType, "mt_quit"), invalid: true},
		{name: "Delayed not a number", edit: set(rocketmq.PropDelay, "soon"), invalid: true},
		{name: "Delayed negative", edit: set(rocketmq.PropDelay, "-1"), invalid: true},
		{name: "CE_time not a time", edit: set(rocketmq.PropTime, "yesterday"), check: wantRecentTimestamp},
		{name: "CE_specversion junk", edit: set(rocketmq.PropSpecVersion, "99")},
		{name: "CE_baggage junk", edit: set(rocketmq.PropBaggage, "justakey")},
		{name: "header property in another case", edit: set("handledcount", "junk"), check: wantCount(0)},
		{name: "invalid UTF-8 body", edit: body(invalidUTF8), check: wantBody(invalidUTF8)},
		{name: "oversized body", edit: body(oversized), check: wantBody(oversized)},
		{name: "forged rejection keys and a junk count", edit: set(message.KeyOriginalTopic, "t", message.KeyRejectionTimestamp, "x", rocketmq.PropHandledCount, "-5"), invalid: true},
	}
	for _, j := range junkCounts {
		cs = append(cs, corpusCase{name: j.name, edit: set(rocketmq.PropHandledCount, j.text), invalid: true})
	}
	for _, mt := range localTypes {
		cs = append(cs, corpusCase{name: mt, edit: set(rocketmq.PropMessageType, mt), invalid: true})
	}
	return cs
}

// runCorpus publishes every case raw, runs ONE pump over the channel for
// the whole corpus, and checks that each case is handled once with defaults
// or routed as Unacceptable with its identity, and that a good message
// published after the corpus is still handled (the consumer never stops).
func runCorpus(t *testing.T, f Fixture, v pump.Variant, cases []corpusCase) {
	if len(cases) < 25 {
		t.Fatalf("the corpus has %d kinds, want at least 25 so that every field of every transport is attacked", len(cases))
	}
	logger, logs := NewLogger()
	ch := f.Open(t, Setup{RequeueCount: 3, DeadLetter: true, Invalid: true, Logger: logger})
	wc, ok := ch.(WireChannel)
	if !ok {
		t.Fatalf("the %s fixture cannot publish raw wire messages", f.Configuration())
	}
	base := uniqueID(t)
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = fmt.Sprintf("%s-%02d", base, i)
		wc.SendWire(t, newMessage(f, ids[i]), c.edit)
	}
	// which finds the case a received message is: by id, correlation id or
	// the id in its body, whichever the case left readable.
	which := func(m *message.Message) int {
		for i, id := range ids {
			if m.Header.MessageID == id || m.OriginalID() == id || m.Header.CorrelationID == "corr-"+id || bytes.Contains(m.Body, []byte(`"`+id+`"`)) {
				return i
			}
		}
		return -1
	}
	var mu sync.Mutex
	handled := map[int][]*message.Message{}
	goodID := base + "-good"
	var good int
	h := func(_ context.Context, m *message.Message) pump.Result {
		mu.Lock()
		defer mu.Unlock()
		if m.Header.MessageID == goodID {
			good++
		} else if i := which(m); i >= 0 {
			handled[i] = append(handled[i], m)
		} else {
			t.Errorf("handled a message of no case: id %q corr %q", m.Header.MessageID, m.Header.CorrelationID)
		}
		return pump.Result{Outcome: pump.Ack}
	}
	// The pump sees exactly the consumer's capabilities, as in consume, so
	// a row cannot pass on a capability the real pump would not use.
	opts := pumpOptions(v, 3)
	opts.BufferSize = 10
	rc := NewRecordingConsumer(ch.Consumer(t, opts.BufferSize))
	running := Start(t, rc.View(t), h, opts, pump.LogObserver{Logger: logger})
	settled := func() bool {
		mu.Lock()
		defer mu.Unlock()
		done := map[int]bool{}
		for i := range handled {
			done[i] = true
		}
		for _, r := range rc.AllRejects() {
			if i := which(r.Message); i >= 0 {
				done[i] = true
			}
		}
		return len(done) == len(cases)
	}
	polltest.Until(t, waitLong, "every corpus message handled or rejected", settled)
	ch.Send(t, newMessage(f, goodID))
	polltest.Until(t, waitLong, "the good message after the corpus handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return good > 0
	})
	select {
	case err := <-running.done:
		t.Fatalf("the pump stopped during the corpus: %v", err)
	default:
	}
	running.Quit(t)

	rejected := map[int][]message.Rejection{}
	for _, r := range rc.AllRejects() {
		if i := which(r.Message); i >= 0 {
			rejected[i] = append(rejected[i], r.Rejection)
		}
	}
	for i, c := range cases {
		switch {
		case c.invalid && len(handled[i]) > 0:
			t.Errorf("%s: dispatched %d times, want routed as Unacceptable before any dispatch", c.name, len(handled[i]))
		case c.invalid && (len(rejected[i]) != 1 || rejected[i][0].Reason != message.ReasonUnacceptable || rejected[i][0].Description == ""):
			t.Errorf("%s: rejections %+v, want one Unacceptable saying why", c.name, rejected[i])
		case !c.invalid && (len(handled[i]) != 1 || len(rejected[i]) != 0):
			t.Errorf("%s: handled %d times and rejected %+v, want handled once with defaults", c.name, len(handled[i]), rejected[i])
		case !c.invalid:
			m := handled[i][0]
			if m.Header.HandledCount < 0 {
				t.Errorf("%s: presented %d", c.name, m.Header.HandledCount)
			}
			if !c.lostID && m.Header.MessageID != ids[i] {
				t.Errorf("%s: id %q, want %q", c.name, m.Header.MessageID, ids[i])
			}
			if c.check != nil {
				t.Run(c.name, func(t *testing.T) { c.check(t, m) })
			}
		}
	}

	// The invalid-message destination holds each invalid case once, with
	// its identity (the Brighter id where it was readable) and the reason.
	inv := ch.Invalid(t)
	copies := map[int]*message.Message{}
	want := 0
	for _, c := range cases {
		if c.invalid {
			want++
		}
	}
	polltest.Until(t, waitLong, "every invalid case on the invalid-message destination", func() bool {
		for _, m := range Drain(t, inv, 2*time.Second, 100) {
			if i := which(m); i >= 0 {
				copies[i] = m
			}
		}
		return len(copies) >= want
	})
	for i, c := range cases {
		m := copies[i]
		switch {
		case !c.invalid && m != nil:
			t.Errorf("%s: on the invalid-message destination, want handled", c.name)
		case !c.invalid:
		case !c.lostID && m.Header.MessageID != ids[i]:
			t.Errorf("%s: the invalid copy's id is %q, want the Brighter id %q", c.name, m.Header.MessageID, ids[i])
		default:
			if got, _ := m.Header.Bag.String(message.KeyRejectionReason); got != message.ReasonUnacceptable.String() {
				t.Errorf("%s: rejectionReason %q", c.name, got)
			}
			if got, _ := m.Header.Bag.String(message.KeyRejectionMessage); got == "" || got == "failed to parse message" {
				t.Errorf("%s: rejectionMessage %q, want the field and the problem", c.name, got)
			}
			if m.Header.CorrelationID != "corr-"+ids[i] {
				t.Errorf("%s: correlation id %q lost", c.name, m.Header.CorrelationID)
			}
		}
	}
	// The consumer's Warning for an undecodable message names both ids
	// (a message typed MT_UNACCEPTABLE on the wire decodes: no Warning).
	warned := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["level"] != "WARN" {
			continue
		}
		for _, k := range []string{"sqs_message_id", "pubsub_message_id", "rocketmq_message_id"} {
			if id, _ := rec["message_id"].(string); id != "" && rec[k] != nil && rec[k] != "" {
				warned[id] = true
			}
		}
	}
	for i, c := range cases {
		if c.invalid && !c.lostID && c.name != "MT_UNACCEPTABLE" && !warned[ids[i]] {
			t.Errorf("%s: no Warning naming the Brighter id %s and the broker's id", c.name, ids[i])
		}
	}
	if t.Failed() {
		t.Logf("logs:\n%s", logs.String())
	}
}

// TestMalformedMessageCorpus sends each transport's corpus of
// malformed messages (missing attributes, bags that are not JSON objects,
// junk counts, local and unknown message types, invalid UTF-8, oversized
// and empty bodies, bad timestamps and cloudeventheaders, forged metadata)
// raw to the emulator and drives it through one real pump per variant.
func TestMalformedMessageCorpus(t *testing.T) {
	t.Parallel()
	// Pub/Sub's pull and stream consumers receive through different
	// code, so both run the corpus.
	pull, stream := pubsubFixtures()[0], pubsubFixtures()[2]
	pull.start(t)
	stream.start(t)
	transports := []struct {
		f     Fixture
		cases []corpusCase
	}{
		{sqsFixtures()[0], sqsCorpus()}, // SqsStandard
		{pull, pubsubCorpus()},
		{stream, pubsubCorpus()},
		{newRocketFixture(), rocketCorpus()},
	}
	for _, tr := range transports {
		for _, v := range Variants {
			t.Run(strings.ReplaceAll(tr.f.Transport(), "/", "")+"/"+tr.f.Configuration()+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				runCorpus(t, tr.f, v, tr.cases)
			})
		}
	}
}

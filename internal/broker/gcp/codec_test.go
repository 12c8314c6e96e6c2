package gcp

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

func fullMessage() *message.Message {
	m := message.New("id-1", "orders", message.MTCommand, []byte("hello"))
	h := &m.Header
	h.Timestamp = time.Date(2026, 8, 7, 12, 46, 6, 123000000, time.UTC)
	h.HandledCount = 2
	h.CorrelationID, h.ReplyTo, h.ContentType, h.PartitionKey = "corr", "replies", "application/json", "key-1"
	h.Type, h.Subject, h.DataSchema = "order.created", "subj", "https://schema"
	h.TraceParent, h.TraceState, h.Baggage = "00-abc-def-01", "k=v", "a=1,b=2"
	h.Bag = message.Bag{"tenant": "acme", "priority": float64(3), "flag": true, ReceiptHandleKey: "stale-ack", "topic": "clash"}
	return m
}

// TestEncode_ExactAttributeNames_Ref3 checks Brighter's attribute names and
// values (docs/wire-format.md#pubsub), the flattened bag and the ordering key.
func TestEncode_ExactAttributeNames_Ref3(t *testing.T) {
	w := Encode(fullMessage())
	want := map[string]string{
		"ce-id": "id-1", "Topic": "orders", "HandledCount": "2", "MessageType": "MT_COMMAND",
		"ce-specversion": "1.0", "ce-source": message.DefaultSource, "ce-time": "2026-08-07T12:46:06.123Z",
		"ce-datacontenttype": "application/json", "ce-baggage": "a=1,b=2", "ce-type": "order.created",
		"CorrelationId": "corr", "ReplyTo": "replies", "ce-subject": "subj", "ce-dataschema": "https://schema",
		"ce-traceparent": "00-abc-def-01", "ce-tracestate": "k=v",
		"tenant": "acme", "priority": "3", "flag": "True",
	}
	if !reflect.DeepEqual(w.Attributes, want) {
		t.Errorf("attributes\n got %v\nwant %v", w.Attributes, want)
	}
	if w.OrderingKey != "key-1" || string(w.Data) != "hello" {
		t.Errorf("ordering key %q data %q", w.OrderingKey, w.Data)
	}
}

// TestEncode_EmptyOptionalHeadersOmitted_Ref3: optional attributes only when
// present; ce-baggage always (may be empty).
func TestEncode_EmptyOptionalHeadersOmitted_Ref3(t *testing.T) {
	w := Encode(message.New("x", "t", message.MTEvent, nil))
	for _, k := range []string{AttrType, AttrCorrelationID, AttrReplyTo, AttrSubject, AttrDataSchema, AttrTraceParent, AttrTraceState} {
		if _, ok := w.Attributes[k]; ok {
			t.Errorf("attribute %s present for an empty header", k)
		}
	}
	if v, ok := w.Attributes[AttrBaggage]; !ok || v != "" {
		t.Errorf("ce-baggage = %q, %v; want present and empty", v, ok)
	}
}

// TestCodec_RoundTrip_Ref3 decodes what Encode wrote: every header field
// comes back, the bag comes back as strings without ReceiptHandle or
// header-name clashes.
func TestCodec_RoundTrip_Ref3(t *testing.T) {
	in := fullMessage()
	w := Encode(in)
	w.ID = "m0"
	out, err := Decode(w, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := in.Header
	want.Bag = message.Bag{"tenant": "acme", "priority": "3", "flag": "True"}
	if !reflect.DeepEqual(out.Header, want) {
		t.Errorf("header\n got %+v\nwant %+v", out.Header, want)
	}
	if string(out.Body) != "hello" {
		t.Errorf("body %q", out.Body)
	}
}

// TestDecode_MissingAttributesTakeBrighterDefaults_Ref3: missing attributes
// take Brighter's defaults; foreign attributes compared case-insensitively with
// the header names.
func TestDecode_MissingAttributesTakeBrighterDefaults_Ref3(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m, err := Decode(Wire{ID: "m7", Data: []byte("x"), Attributes: map[string]string{"TOPIC": "ignored-case", "MessageType": "nonsense", "ce-time": "garbage", "extra": "v"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Header
	if h.MessageID != "m7" || h.ContentType != DefaultReceivedContentType || h.MessageType != message.MTEvent || !h.Timestamp.Equal(now) || h.HandledCount != 0 {
		t.Errorf("defaults wrong: %+v", h)
	}
	if h.Topic != "" {
		t.Errorf("topic %q read from a differently cased attribute", h.Topic)
	}
	if !reflect.DeepEqual(h.Bag, message.Bag{"extra": "v"}) {
		t.Errorf("bag %v", h.Bag)
	}
}

// TestDecodeOrFailure_Unacceptable: what Brighter could not parse becomes
// MT_UNACCEPTABLE, with id and body kept, never dropped.
func TestDecodeOrFailure_Unacceptable(t *testing.T) {
	cases := map[string]struct {
		attrs map[string]string
		want  error
	}{
		"bad count":      {map[string]string{AttrHandledCount: "many"}, ErrBadHandledCount},
		"negative count": {map[string]string{AttrHandledCount: "-2"}, ErrBadHandledCount},
		"local type":     {map[string]string{AttrMessageType: "MT_QUIT"}, ErrLocalMessageType},
		"bad baggage":    {map[string]string{AttrBaggage: "a=1,oops"}, ErrBadBaggage},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.attrs[AttrID] = "bad-1"
			m, err := DecodeOrFailure(Wire{ID: "m1", Data: []byte("body"), Attributes: tc.attrs}, time.Now())
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if m == nil || m.Header.MessageType != message.MTUnacceptable || m.Header.MessageID != "bad-1" || string(m.Body) != "body" {
				t.Fatalf("failure message %+v", m)
			}
		})
	}
}

// FuzzDecode: Decode never panics, always returns a message, and a message it
// accepts re-encodes to attributes that decode to the same header.
func FuzzDecode(f *testing.F) {
	w := Encode(fullMessage())
	f.Add("id", "orders", "3", "MT_EVENT", "2026-08-07T12:46:06.123Z", "a=1", "k", "v", []byte("body"))
	f.Add(w.Attributes[AttrID], w.Attributes[AttrTopic], "-1", "MT_QUIT", "", "oops", "ReceiptHandle", "x", []byte{0xff})
	f.Add("", "", "", "1", "not a time", "", "topic", "y", []byte(nil))
	f.Fuzz(func(t *testing.T, id, topic, count, mt, ts, baggage, k, v string, data []byte) {
		attrs := map[string]string{AttrID: id, AttrTopic: topic, AttrHandledCount: count, AttrMessageType: mt, AttrTime: ts, AttrBaggage: baggage, k: v}
		now := time.Unix(1700000000, 0).UTC()
		m, err := DecodeOrFailure(Wire{ID: "m1", Data: data, Attributes: attrs}, now)
		if m == nil {
			t.Fatal("nil message")
		}
		if m.Header.HandledCount < 0 {
			t.Fatalf("negative count %d", m.Header.HandledCount)
		}
		if err != nil {
			if m.Header.MessageType != message.MTUnacceptable {
				t.Fatalf("failed decode presented as %v", m.Header.MessageType)
			}
			return
		}
		again, err := Decode(Encode(m), now)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if again.Header.HandledCount != m.Header.HandledCount || again.Header.MessageType != m.Header.MessageType ||
			again.Header.Topic != m.Header.Topic || !reflect.DeepEqual(again.Header.Bag, m.Header.Bag) {
			t.Fatalf("round trip changed header:\n%+v\n%+v", m.Header, again.Header)
		}
	})
}

// TestDecodeBagHoldsEveryAttributeButTheHeaderNamesInAnyCase checks which
// received attributes become bag entries: every header attribute name and
// ReceiptHandle is left out whatever its case (ASCII letters), and every
// other attribute is kept as it came, including keys with non-ASCII
// letters (whose case folding strings.ToLower decides: a long s or a
// Kelvin sign never makes a header name) and keys longer than any header
// name.
func TestDecodeBagHoldsEveryAttributeButTheHeaderNamesInAnyCase(t *testing.T) {
	long := "an-attribute-name-longer-than-thirty-two-bytes"
	w := Wire{ID: "p-1", Data: []byte("x"), Attributes: map[string]string{
		"ce-id": "id-1", "Topic": "orders", "MessageType": "MT_EVENT",
		"TOPIC": "shout", "ce-ID": "other", "messagetype": "low", "CE-TRACEPARENT": "tp",
		"receipthandle": "stale", "RECEIPTHANDLE": "stale", "HandledCOUNT": "9",
		"tenant": "acme", "Region": "eu", "ce-\u017Fource": "long-s", "ce-\u212Aind": "kelvin",
		"t\u00f6pic": "umlaut", long: "long", "": "empty",
	}}
	m, err := Decode(w, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := message.Bag{
		"tenant": "acme", "Region": "eu", "ce-\u017Fource": "long-s", "ce-\u212Aind": "kelvin",
		"t\u00f6pic": "umlaut", long: "long", "": "empty",
	}
	if !reflect.DeepEqual(m.Header.Bag, want) {
		t.Fatalf("bag = %v, want %v", m.Header.Bag, want)
	}
	if m.Header.Topic != "orders" || m.Header.MessageID != "id-1" || m.Header.HandledCount != 0 {
		t.Fatalf("header read from a name in the wrong case: topic %q, id %q, handled %d", m.Header.Topic, m.Header.MessageID, m.Header.HandledCount)
	}
}

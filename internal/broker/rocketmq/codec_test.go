package rocketmq_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func full() *message.Message {
	m := message.New("id-1", "orders", message.MTCommand, []byte(`{"a":1}`))
	h := &m.Header
	h.Timestamp = time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)
	h.HandledCount, h.CorrelationID, h.ReplyTo = 3, "corr", "replies"
	h.ContentType, h.Type, h.Subject = "application/json", "order.created", "subj"
	h.DataSchema, h.DataRef = "https://schema", "ref"
	h.TraceParent, h.TraceState, h.Baggage = "00-abc-def-01", "k=v", "a=1,b=2"
	h.Bag = message.Bag{"custom": "x", "n": float64(7)}
	return m
}

// TestEncode_WritesBrighterPropertyNames: Brighter's exact property names go on
// the wire (docs/wire-format.md#rocketmq).
func TestEncode_WritesBrighterPropertyNames(t *testing.T) {
	out := rocketmq.Encode(full(), "broker-topic", "", now)
	want := map[string]string{
		"CE_id": "id-1", "Topic": "orders", "HandledCount": "3", "MessageType": "MT_COMMAND",
		"CE_time": "2026-01-02T03:04:05.678Z", "CE_source": message.DefaultSource, "CE_specversion": "1.0",
		"CE_baggage": "a=1,b=2", "CE_type": "order.created", "CE_subject": "subj", "CE_dataschema": "https://schema",
		"Content-Type": "application/json", "CE_contenttype": "application/json", "CorrelationId": "corr",
		"ReplyTo": "replies", "CE_dataref": "ref", "CE_traceparent": "00-abc-def-01", "CE_tracestate": "k=v",
		"custom": "x", "n": "7",
	}
	if got := out.GetProperties(); !reflect.DeepEqual(got, want) {
		t.Fatalf("properties\n got %v\nwant %v", got, want)
	}
	if out.Topic != "broker-topic" {
		t.Errorf("topic %q", out.Topic)
	}
	if !reflect.DeepEqual(out.GetKeys(), []string{"id-1"}) || out.GetTag() != nil || out.GetMessageGroup() != nil {
		t.Errorf("keys %v tag %v group %v", out.GetKeys(), out.GetTag(), out.GetMessageGroup())
	}
}

// Keys and tag come from the steering bag entries, which are not sent as
// properties; the message group is the partition key; a bag entry named like a
// header property cannot overwrite it.
func TestEncode_SteeringAndGroup(t *testing.T) {
	m := full()
	m.Header.PartitionKey = "customer-9"
	m.Header.Bag[rocketmq.BagKeys] = []any{"k1", "k2"}
	m.Header.Bag[rocketmq.BagTag] = "created"
	m.Header.Bag[rocketmq.PropHandledCount] = "99"
	out := rocketmq.Encode(m, "t", "default-tag", now)
	if !reflect.DeepEqual(out.GetKeys(), []string{"k1", "k2"}) {
		t.Errorf("keys %v", out.GetKeys())
	}
	if out.GetTag() == nil || *out.GetTag() != "created" {
		t.Errorf("tag %v", out.GetTag())
	}
	if out.GetMessageGroup() == nil || *out.GetMessageGroup() != "customer-9" {
		t.Errorf("group %v", out.GetMessageGroup())
	}
	p := out.GetProperties()
	if _, ok := p[rocketmq.BagKeys]; ok {
		t.Errorf("steering key sent as a property")
	}
	if p[rocketmq.PropHandledCount] != "3" {
		t.Errorf("HandledCount = %q, want the header's 3", p[rocketmq.PropHandledCount])
	}
	m.Header.Bag = message.Bag{}
	if out := rocketmq.Encode(m, "t", "default-tag", now); out.GetTag() == nil || *out.GetTag() != "default-tag" {
		t.Errorf("default tag not applied")
	}
}

// Delay travels in its own property and as a delivery timestamp; HandledCount
// is never read as a delay (the ReadDelay defect, docs/wire-format.md#rocketmq).
func TestCodec_DelayHasItsOwnProperty(t *testing.T) {
	m := full()
	m.Header.Delay = 1500 * time.Millisecond
	out := rocketmq.Encode(m, "t", "", now)
	if got := out.GetProperties()[rocketmq.PropDelay]; got != "1500" {
		t.Fatalf("Delayed = %q", got)
	}
	if d := out.GetDeliveryTimestamp(); d == nil || !d.Equal(now.Add(1500*time.Millisecond)) {
		t.Fatalf("delivery timestamp %v", d)
	}
	back, err := rocketmq.Decode(rocketmq.WireFromMessage(out), now)
	if err != nil || back.Header.Delay != 1500*time.Millisecond {
		t.Fatalf("decoded delay %v err %v", back.Header.Delay, err)
	}
	m.Header.Delay = 0
	back, err = rocketmq.Decode(rocketmq.WireFromMessage(rocketmq.Encode(m, "t", "", now)), now)
	if err != nil || back.Header.Delay != 0 || back.Header.HandledCount != 3 {
		t.Fatalf("HandledCount 3 read as delay %v (count %d, err %v)", back.Header.Delay, back.Header.HandledCount, err)
	}
}

// TestCodec_RoundTripKeepsHeaderBagAndBody: a message encoded and decoded
// again has the same header (bag with partition key and tag included) and
// body.
func TestCodec_RoundTripKeepsHeaderBagAndBody(t *testing.T) {
	m := full()
	m.Header.PartitionKey = "pk"
	m.Header.Bag[rocketmq.BagTag] = "tg"
	w := rocketmq.WireFromMessage(rocketmq.Encode(m, "orders", "", now))
	w.MessageID = "broker-id"
	got, err := rocketmq.Decode(w, now)
	if err != nil {
		t.Fatal(err)
	}
	want := m.Header
	want.Bag = message.Bag{"custom": "x", "n": "7", rocketmq.BagTag: "tg"}
	if !reflect.DeepEqual(got.Header, want) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got.Header, want)
	}
	if string(got.Body) != string(m.Body) {
		t.Fatalf("body %q", got.Body)
	}
}

// TestDecode_ForeignMessageTakesBrighterFallbacks: reading a foreign message
// follows Brighter's fallbacks.
func TestDecode_ForeignMessageTakesBrighterFallbacks(t *testing.T) {
	w := rocketmq.Wire{Topic: "t", MessageID: "bid", Keys: []string{"bid"}, Properties: map[string]string{"MessageType": "mt_document"}}
	m, err := rocketmq.Decode(w, now)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Header
	if h.MessageID != "bid" || h.MessageType != message.MTDocument || h.ContentType != "text/plain" || !h.Timestamp.Equal(now) || h.HandledCount != 0 {
		t.Fatalf("header %+v", h)
	}
	if _, ok := h.Bag[rocketmq.BagKeys]; ok {
		t.Errorf("bare message-id key copied to the bag")
	}
	w.Properties["MessageType"] = "nonsense"
	if m, _ := rocketmq.Decode(w, now); m.Header.MessageType != message.MTEvent {
		t.Errorf("unknown type = %s, want MT_EVENT", m.Header.MessageType)
	}
}

// TestDecode_RefusesBadPropertiesAndLocalMessageTypes: a HandledCount that
// is not a non-negative integer or a Delayed that is not a duration is
// ErrBadProperty; MT_QUIT and MT_NONE are ErrLocalMessageType.
func TestDecode_RefusesBadPropertiesAndLocalMessageTypes(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  error
	}{
		{map[string]string{"HandledCount": "x"}, rocketmq.ErrBadProperty},
		{map[string]string{"HandledCount": "-1"}, rocketmq.ErrBadProperty},
		{map[string]string{"Delayed": "soon"}, rocketmq.ErrBadProperty},
		{map[string]string{"MessageType": "MT_QUIT"}, rocketmq.ErrLocalMessageType},
		{map[string]string{"MessageType": "mt_none"}, rocketmq.ErrLocalMessageType},
	} {
		if _, err := rocketmq.Decode(rocketmq.Wire{Topic: "t", MessageID: "b", Properties: tc.props}, now); !errors.Is(err, tc.want) {
			t.Errorf("%v: err %v, want %v", tc.props, err, tc.want)
		}
	}
	u := rocketmq.Unacceptable(rocketmq.Wire{Topic: "t", MessageID: "b", Properties: map[string]string{"HandledCount": "x", "k": "v"}, Body: []byte{1}}, now)
	if u.Header.MessageType != message.MTUnacceptable || u.Header.Bag["k"] != "v" || len(u.Body) != 1 {
		t.Errorf("unacceptable %+v", u)
	}
}

func TestDeliveryCount_R1_R2_R28(t *testing.T) {
	for _, tc := range []struct {
		stamped int
		attempt int32
		routed  bool
		want    int
	}{{0, 1, false, 0}, {0, 3, false, 2}, {2, 1, false, 2}, {2, 4, false, 5}, {2, 4, true, 2}, {0, 0, false, 0}, {1, -1, false, 1}} {
		if got := rocketmq.DeliveryCount(tc.stamped, tc.attempt, tc.routed); got != tc.want {
			t.Errorf("DeliveryCount(%d, %d, %v) = %d, want %d", tc.stamped, tc.attempt, tc.routed, got, tc.want)
		}
	}
}

// FuzzDecode: any wire message either decodes or is refused with an error;
// it never panics, and a decoded message re-encodes and decodes to the same
// header. The seeds run in every normal test run.
func FuzzDecode(f *testing.F) {
	f.Add("MT_COMMAND", "3", "2026-01-02T03:04:05.678Z", "", "grp", "k", "v", []byte("{}"))
	f.Add("mt_event", "0", "garbage", "100", "", "Topic", "shadow", []byte{0xff})
	f.Add("MT_QUIT", "x", "", "-5", "", "", "", []byte(nil))
	f.Add("", "", "", "", "", rocketmq.BagKeys, "k1", []byte("b"))
	f.Fuzz(func(t *testing.T, mt, hc, ts, delay, group, k, v string, body []byte) {
		props := map[string]string{"MessageType": mt, "HandledCount": hc, "CE_time": ts, "Delayed": delay, k: v}
		w := rocketmq.Wire{Topic: "t", MessageID: "bid", MessageGroup: group, Properties: props, Body: body}
		m, err := rocketmq.Decode(w, now)
		if err != nil {
			if u := rocketmq.Unacceptable(w, now); u.Header.MessageType != message.MTUnacceptable {
				t.Fatalf("unacceptable has type %s", u.Header.MessageType)
			}
			return
		}
		again, err := rocketmq.Decode(rocketmq.WireFromMessage(rocketmq.Encode(m, "t", "", now)), now)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		a, b := m.Header, again.Header
		a.Bag, b.Bag = nil, nil
		a.Timestamp, b.Timestamp = a.Timestamp.Truncate(time.Millisecond), b.Timestamp.Truncate(time.Millisecond)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("re-decode changed the header\n got %+v\nwant %+v", b, a)
		}
	})
}

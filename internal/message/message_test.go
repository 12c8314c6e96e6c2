package message_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// Stamp writes the five keys with Brighter's exact names and formats,
// the pump's PascalCase RejectionReason text, brighter's rejectionPath, the
// destination as topic; the receipt is not copied and the original is
// untouched.
func TestStampExactKeysAndFormats_R18(t *testing.T) {
	orig := message.New("id-1", "orders", message.MTCommand, []byte("body"))
	orig.Header.HandledCount = 3
	orig.Header.Bag["custom"] = "kept"
	orig.Receipt = struct{ h string }{"rh"}
	before := orig.Clone()
	beforeBag := maps.Clone(orig.Header.Bag)
	// A non-UTC time with nanoseconds: the stamp is UTC with 7 digits.
	now := time.Date(2026, 1, 2, 4, 5, 6, 987654321, time.FixedZone("X", 3600))

	c := message.Stamp(orig, "orders.dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "spent"}, now)

	want := map[string]string{
		"originalTopic":       "orders",
		"rejectionTimestamp":  "2026-01-02T03:05:06.9876543+00:00",
		"originalMessageType": "MT_COMMAND",
		"rejectionReason":     "DeliveryError",
		"rejectionMessage":    "spent",
		"RejectionReason":     "Message rejected reason: DeliveryError Description: spent",
		"rejectionPath":       "orders.dlq",
		"custom":              "kept",
	}
	if len(c.Header.Bag) != len(want) {
		t.Errorf("bag = %v, want exactly %v", c.Header.Bag, want)
	}
	for k, v := range want {
		if got, _ := c.Header.Bag.String(k); got != v {
			t.Errorf("bag[%q] = %q, want %q", k, got, v)
		}
	}
	ts, _ := c.Header.Bag.String(message.KeyRejectionTimestamp)
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}\+00:00$`).MatchString(ts) {
		t.Errorf("rejectionTimestamp %q is not .NET round-trip UTC with 7 fractional digits", ts)
	}
	if c.Header.Topic != "orders.dlq" || c.Header.HandledCount != 3 || string(c.Body) != "body" {
		t.Errorf("copy header = %+v", c.Header)
	}
	if c.Receipt != nil {
		t.Errorf("receipt copied: %v", c.Receipt)
	}
	if orig.Receipt == nil || orig.Header.Topic != "orders" || !reflect.DeepEqual(orig.Header.Bag, beforeBag) ||
		orig.Header.HandledCount != before.Header.HandledCount {
		t.Errorf("original changed: %+v receipt %v", orig.Header, orig.Receipt)
	}
	if !c.HasRejectionMetadata() || orig.HasRejectionMetadata() {
		t.Errorf("HasRejectionMetadata copy=%v original=%v, want true and false", c.HasRejectionMetadata(), orig.HasRejectionMetadata())
	}
}

// rejectionMessage is written only for a non-empty description; a
// stale one from an earlier routing is removed.
func TestStampOmitsEmptyRejectionMessage_R18(t *testing.T) {
	m := message.New("id", "orders.dlq", message.MTEvent, nil)
	m.Header.Bag[message.KeyRejectionMessage] = "from an earlier rejection"
	c := message.Stamp(m, "orders.invalid", message.Rejection{Reason: message.ReasonUnacceptable}, time.Unix(0, 0))
	if _, ok := c.Header.Bag[message.KeyRejectionMessage]; ok {
		t.Errorf("rejectionMessage present with an empty description: %v", c.Header.Bag)
	}
	if got, _ := c.Header.Bag.String(message.KeyRejectionTimestamp); got != "1970-01-01T00:00:00.0000000+00:00" {
		t.Errorf("rejectionTimestamp = %q", got)
	}
	if got, _ := c.Header.Bag.String(message.KeyOriginalMessageType); got != "MT_EVENT" {
		t.Errorf("originalMessageType = %q", got)
	}
	if _, ok := m.Header.Bag[message.KeyRejectionMessage]; !ok {
		t.Errorf("original's bag was modified")
	}
	message.StripRejection(c.Header.Bag)
	if len(c.Header.Bag) != 0 {
		t.Errorf("StripRejection left %v", c.Header.Bag)
	}
}

// Every MessageType round-trips through String and ParseMessageType, by name
// and by number; foreign values report false and MT_EVENT.
func TestMessageTypeRoundTrip(t *testing.T) {
	names := map[message.MessageType]string{
		message.MTUnacceptable: "MT_UNACCEPTABLE", message.MTNone: "MT_NONE", message.MTCommand: "MT_COMMAND",
		message.MTEvent: "MT_EVENT", message.MTDocument: "MT_DOCUMENT", message.MTQuit: "MT_QUIT",
	}
	for mt, name := range names {
		if mt.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(mt), mt.String(), name)
		}
		if got, ok := message.ParseMessageType(name); !ok || got != mt {
			t.Errorf("ParseMessageType(%q) = %v, %v", name, got, ok)
		}
		b, _ := mt.MarshalText()
		var back message.MessageType
		if err := back.UnmarshalText(b); err != nil || back != mt {
			t.Errorf("text round trip of %s = %v, %v", name, back, err)
		}
	}
	if got, ok := message.ParseMessageType("1"); !ok || got != message.MTCommand {
		t.Errorf("ParseMessageType(\"1\") = %v, %v", got, ok)
	}
	for _, foreign := range []string{"", "mt_command", "MT_BOGUS", "7", "-2", " MT_EVENT"} {
		if got, ok := message.ParseMessageType(foreign); ok || got != message.MTEvent {
			t.Errorf("ParseMessageType(%q) = %v, %v, want MT_EVENT, false", foreign, got, ok)
		}
	}
	var mt message.MessageType
	if err := mt.UnmarshalText([]byte("MT_BOGUS")); err == nil {
		t.Errorf("UnmarshalText(MT_BOGUS) accepted")
	}
	if s := message.MessageType(42).String(); s != "42" {
		t.Errorf("out-of-range String = %q", s)
	}
	for _, r := range []message.RejectionReason{message.ReasonNone, message.ReasonUnacceptable, message.ReasonDeliveryError} {
		if got, ok := message.ParseRejectionReason(r.String()); !ok || got != r {
			t.Errorf("ParseRejectionReason(%q) = %v, %v", r.String(), got, ok)
		}
	}
}

// A JSON-lines record round-trips every header field, a UTF-8 body as text
// and a binary body as base64.
func TestRecordRoundTrip(t *testing.T) {
	cases := []struct {
		name     string
		body     []byte
		encoding string
	}{
		{"utf8", []byte(`{"greeting":"héllo ✓"}`), message.BodyUTF8},
		{"binary", []byte{0x00, 0xff, 0xfe, 0x80, 'a'}, message.BodyBase64},
		{"empty", nil, message.BodyUTF8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := message.New("id-9", "orders", message.MTDocument, tc.body)
			h := &m.Header
			h.Timestamp = time.Date(2026, 5, 6, 7, 8, 9, 123000000, time.UTC)
			h.HandledCount, h.CorrelationID, h.ReplyTo, h.PartitionKey = 4, "corr", "reply", "key"
			h.ContentType, h.Delay, h.Type, h.DataSchema = "application/octet-stream", 1500*time.Millisecond, "t", "ds"
			h.Subject, h.DataRef, h.TraceParent, h.TraceState, h.Baggage = "s", "dr", "tp", "ts", "k=v"
			h.Source, h.SpecVersion = "urn:src", "1.0"
			h.Bag["originalTopic"] = "orders"
			h.Bag["n"] = float64(3)
			line, err := message.MarshalRecordJSON(m)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.ContainsRune(line, '\n') {
				t.Errorf("record spans lines: %s", line)
			}
			var raw map[string]any
			if err := json.Unmarshal(line, &raw); err != nil {
				t.Fatal(err)
			}
			if raw["bodyEncoding"] != tc.encoding || raw["messageType"] != "MT_DOCUMENT" || raw["timestamp"] != "2026-05-06T07:08:09.123Z" {
				t.Errorf("record = %s", line)
			}
			back, err := message.UnmarshalRecordJSON(line)
			if err != nil {
				t.Fatal(err)
			}
			if len(back.Body) == 0 && len(m.Body) == 0 {
				back.Body = m.Body
			}
			if !reflect.DeepEqual(back, m) {
				t.Errorf("round trip:\n got %+v\nwant %+v", back, m)
			}
		})
	}
}

// Bad records give errors naming the field, never a panic.
func TestUnmarshalRecordErrors(t *testing.T) {
	for _, line := range []string{
		``, `{`, `[]`, `{"id":""}`, `{"id":"a","messageType":"MT_BOGUS"}`, `{"id":"a","handledCount":-1}`,
		`{"id":"a","timestamp":"yesterday"}`, `{"id":"a","bodyEncoding":"base64","body":"!!"}`,
		`{"id":"a","bodyEncoding":"hex"}`, `{"id":"a","unknown":1}`,
	} {
		if m, err := message.UnmarshalRecordJSON([]byte(line)); err == nil {
			t.Errorf("UnmarshalRecordJSON(%s) = %+v, want an error", line, m)
		}
	}
}

// FuzzUnmarshalRecordJSON: any input decodes or errors without panicking;
// what decodes re-encodes stably.
func FuzzUnmarshalRecordJSON(f *testing.F) {
	for _, s := range []string{
		`{"id":"a"}`,
		`{"id":"a","topic":"t","messageType":"MT_COMMAND","handledCount":2,"timestamp":"2026-01-01T00:00:00.000Z","bag":{"k":"v","n":1,"o":{"x":[1,2]}},"body":"hi","bodyEncoding":"utf8"}`,
		`{"id":"b","bodyEncoding":"base64","body":"AP/+"}`,
		`{"id":"c","timestamp":"2026-01-01T00:00:00.1234567+00:00","delayMs":-5}`,
		`{"id":"d","messageType":"-1"}`,
		`not json`, ``, `{"id":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := message.UnmarshalRecordJSON(data)
		if err != nil {
			return
		}
		line, err := message.MarshalRecordJSON(m)
		if err != nil {
			return // a bag value json cannot encode (e.g. NaN cannot occur from JSON input)
		}
		m2, err := message.UnmarshalRecordJSON(line)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", line, err)
		}
		line2, err := message.MarshalRecordJSON(m2)
		if err != nil || !bytes.Equal(line, line2) {
			t.Fatalf("unstable encoding:\n%s\n%s (%v)", line, line2, err)
		}
	})
}

// FuzzParseMessageType: parsing never panics; what parses round-trips.
func FuzzParseMessageType(f *testing.F) {
	for _, s := range []string{"MT_COMMAND", "MT_EVENT", "MT_DOCUMENT", "MT_UNACCEPTABLE", "MT_NONE", "MT_QUIT", "1", "-1", "99", "", "mt_event", "+1", "01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mt, ok := message.ParseMessageType(s)
		if !ok {
			if mt != message.MTEvent {
				t.Fatalf("ParseMessageType(%q) = %v, false; want MT_EVENT", s, mt)
			}
			return
		}
		back, ok := message.ParseMessageType(mt.String())
		if !ok || back != mt {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, mt, mt.String(), back, ok)
		}
	})
}

func TestParseWireMessageTypeRefusesLocalTypes(t *testing.T) {
	for _, s := range []string{"MT_QUIT", "MT_NONE", "4", "0"} {
		if mt, err := message.ParseWireMessageType(s); !errors.Is(err, message.ErrLocalMessageType) || mt != message.MTUnacceptable {
			t.Errorf("%q: %v, %v; want MT_UNACCEPTABLE and message.ErrLocalMessageType", s, mt, err)
		}
	}
	for s, want := range map[string]message.MessageType{"MT_UNACCEPTABLE": message.MTUnacceptable, "-1": message.MTUnacceptable, "MT_COMMAND": message.MTCommand, "MT_DOCUMENT": message.MTDocument, "2": message.MTEvent, "nonsense": message.MTEvent, "": message.MTEvent} {
		if mt, err := message.ParseWireMessageType(s); err != nil || mt != want {
			t.Errorf("%q: %v, %v; want %v", s, mt, err, want)
		}
	}
}

// A hostile count: a stamped count is a whole number below HandledCountLimit; every
// other value is an error naming it, never 0 and never wrapped.
func TestParseHandledCountBounds(t *testing.T) {
	for in, want := range map[string]int{"0": 0, " 3 ": 3, "999999": 999999} {
		if got, err := message.ParseHandledCount(in); err != nil || got != want {
			t.Errorf("message.ParseHandledCount(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for in, frag := range map[string]string{"1000000": "at or above the limit", "9223372036854775807": "at or above the limit",
		"9223372036854775808": "at or above the limit", "-1": "negative", "x": "not a whole number", "": "not a whole number", "1.5": "not a whole number"} {
		if _, err := message.ParseHandledCount(in); !errors.Is(err, message.ErrBadHandledCount) || !strings.Contains(err.Error(), frag) {
			t.Errorf("message.ParseHandledCount(%q) err = %v, want ErrBadHandledCount saying %q", in, err, frag)
		}
	}
	if got := message.ClampStamp(math.MaxInt); got != message.HandledCountLimit-1 {
		t.Errorf("message.ClampStamp(MaxInt) = %d", got)
	}
	if got := message.SaturatingAdd(math.MaxInt-1, 5); got != math.MaxInt {
		t.Errorf("SaturatingAdd overflowed to %d", got)
	}
	for _, f := range []float64{-1, 1.5, 1e6, math.Inf(1), math.NaN()} {
		if _, err := message.HandledCountFromNumber(f); !errors.Is(err, message.ErrBadHandledCount) {
			t.Errorf("message.HandledCountFromNumber(%v) accepted", f)
		}
	}
}

// TestUnmarshalRecordJSON_RefusesNotUTF8: a line holding bytes that are
// not UTF-8 is refused with ErrNotUTF8 naming the first bad byte's offset,
// where JSON decoding alone would make each U+FFFD.
func TestUnmarshalRecordJSON_RefusesNotUTF8(t *testing.T) {
	line := []byte(`{"id":"a","body":"x` + "\xff\xfe" + `","bodyEncoding":"utf8"}`)
	m, err := message.UnmarshalRecordJSON(line)
	if !errors.Is(err, message.ErrNotUTF8) || !strings.Contains(err.Error(), "byte 19 (0xff)") {
		t.Fatalf("UnmarshalRecordJSON(%q) = %+v, %v; want ErrNotUTF8 at byte 19", line, m, err)
	}
	if _, err := message.UnmarshalRecordJSON([]byte(`{"id":"a","body":"x 𝄞 é"}`)); err != nil {
		t.Fatalf("a UTF-8 line: %v", err)
	}
}

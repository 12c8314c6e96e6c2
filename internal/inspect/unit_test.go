package inspect_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

func routed(id, topic string, reason message.RejectionReason, desc string, at time.Time) *message.Message {
	m := message.New(id, topic, message.MTCommand, []byte("{}"))
	return message.Stamp(m, "dlq", message.Rejection{Reason: reason, Description: desc}, at)
}

// TestNormalise_MasksNumbersAndIdentifiers: numbers become <n>, UUIDs and
// hex ids <id>, plurals of time (s) and runs of spaces one, so reasons that
// differ only there group together.
func TestNormalise_MasksNumbersAndIdentifiers(t *testing.T) {
	for in, want := range map[string]string{
		"order 42 failed":    "order <n> failed",
		"order 43  failed\n": "order <n> failed",
		"id 3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b not found":  "id <id> not found",
		"trace deadbeef01 lost":                              "trace <id> lost",
		"no customer":                                        "no customer",
		"delivered 4 times, handled 1 time in this process":  "delivered <n> time(s), handled <n> time(s) in this process",
		"delivered 4 times, handled 3 times in this process": "delivered <n> time(s), handled <n> time(s) in this process",
		"order 7 timed out":                                  "order <n> timed out",
	} {
		if got := inspect.Normalise(in); got != want {
			t.Errorf("Normalise(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFilter_Match_R9(t *testing.T) {
	now := time.Now()
	m := routed("a", "orders", message.ReasonDeliveryError, "timed out", now)
	native := message.New("n", "orders", message.MTEvent, nil) // moved by the broker: no metadata
	cases := []struct {
		f    inspect.Filter
		m    *message.Message
		want bool
	}{
		{inspect.Filter{}, m, true},
		{inspect.Filter{Reasons: []string{"deliveryerror"}}, m, true},
		{inspect.Filter{Reasons: []string{"Unacceptable"}}, m, false},
		{inspect.Filter{Reasons: []string{"native"}}, native, true},
		{inspect.Filter{Reasons: []string{"native"}}, m, false},
		{inspect.Filter{Topics: []string{"ord*"}}, m, true},
		{inspect.Filter{Topics: []string{"payments"}}, m, false},
		{inspect.Filter{Since: now.Add(-time.Minute)}, m, true},
		{inspect.Filter{Since: now.Add(time.Minute)}, m, false},
		{inspect.Filter{Until: now.Add(-time.Minute)}, m, false},
		{inspect.Filter{IDs: []string{"b", "a"}}, m, true},
		{inspect.Filter{IDs: []string{"b"}}, m, false},
		{inspect.Filter{Grep: regexp.MustCompile("time.*out")}, m, true},
		{inspect.Filter{Grep: regexp.MustCompile("refused")}, m, false},
	}
	for i, c := range cases {
		if got := c.f.Match(c.m); got != c.want {
			t.Errorf("case %d: Match = %v, want %v", i, got, c.want)
		}
	}
	if d := inspect.Describe(native); !d.NativeRedrive || d.Reason != inspect.ReasonNativeRedrive {
		t.Errorf("native message described as %+v", d)
	}
}

// TestFilter_ValidateRefusesBadFilters: an unknown reason, a malformed topic
// pattern, a negative limit and a since after until are refused;
// ParseTimeBound refuses free text and reads a duration as that long before
// now.
func TestFilter_ValidateRefusesBadFilters(t *testing.T) {
	for _, f := range []inspect.Filter{{Reasons: []string{"Nope"}}, {Topics: []string{"["}}, {Limit: -1}, {Since: time.Now(), Until: time.Now().Add(-time.Hour)}} {
		if err := f.Validate(); err == nil {
			t.Errorf("%+v: no error", f)
		}
	}
	if _, err := inspect.ParseTimeBound("since", "yesterday", time.Now()); err == nil {
		t.Error("ParseTimeBound accepted yesterday")
	}
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	if got, _ := inspect.ParseTimeBound("since", "2h", now); !got.Equal(now.Add(-2 * time.Hour)) {
		t.Errorf("2h ago = %v", got)
	}
}

func TestReplayCopy_R5(t *testing.T) {
	m := routed("a", "orders", message.ReasonDeliveryError, "x", time.Now())
	m.Header.HandledCount, m.Receipt, m.Header.PartitionKey = 4, "rcpt", "g1"
	m.Header.Bag[inspect.KeyDeduplicationID] = "old"
	c, dest, err := inspect.ReplayCopy(m, "sqs://dlq", "dlq", inspect.ReplayOptions{}, time.Now())
	if err != nil || dest != "orders" {
		t.Fatalf("dest %q err %v", dest, err)
	}
	if c.Receipt != nil || c.Header.HandledCount != 0 || c.Header.Topic != "orders" || c.Header.PartitionKey != "g1" || c.HasRejectionMetadata() {
		t.Errorf("copy %+v", c.Header)
	}
	if c.Header.Bag[inspect.KeyDeduplicationID] == "old" || c.Header.Bag[message.KeyReplayedFrom] != "sqs://dlq" {
		t.Errorf("bag %v", c.Header.Bag)
	}
	if m.Header.HandledCount != 4 || !m.HasRejectionMetadata() {
		t.Error("ReplayCopy changed the original")
	}
	native := message.New("n", "dlq", message.MTEvent, nil)
	if _, _, err := inspect.ReplayCopy(native, "sqs://dlq", "dlq", inspect.ReplayOptions{}, time.Now()); !errors.Is(err, inspect.ErrNoRedriveSource) {
		t.Errorf("replay into itself of a message without rejection metadata: %v, want ErrNoRedriveSource", err)
	}
	// The one source whose redrive policy targets the queue is where a
	// message without rejection metadata naming only the queue goes; it
	// is not on any allow-list (it was not written by the message).
	refuseAll := func(string) bool { return false }
	if c, dest, err := inspect.ReplayCopy(native, "sqs://dlq", "dlq", inspect.ReplayOptions{RedriveSource: func() string { return "orders" }, Allow: refuseAll}, time.Now()); err != nil || dest != "orders" || c.Header.Topic != "orders" {
		t.Errorf("replay with a known redrive source: dest %q err %v, want orders", dest, err)
	}
	// A message without rejection metadata naming another topic goes
	// there, through the allow-list, whatever the redrive source.
	other := message.New("o", "audit", message.MTEvent, nil)
	if _, dest, err := inspect.ReplayCopy(other, "sqs://dlq", "dlq", inspect.ReplayOptions{RedriveSource: func() string { return "orders" }, Allow: refuseAll}, time.Now()); !errors.Is(err, inspect.ErrRefused) || dest != "audit" {
		t.Errorf("replay of a message naming audit: dest %q err %v, want refused to audit", dest, err)
	}
	// A rejected message naming the queue itself has no destination.
	self := routed("s", "dlq", message.ReasonDeliveryError, "x", time.Now())
	if _, _, err := inspect.ReplayCopy(self, "sqs://dlq", "dlq", inspect.ReplayOptions{RedriveSource: func() string { return "orders" }}, time.Now()); !errors.Is(err, inspect.ErrNoDestination) {
		t.Errorf("replay of a rejection whose originalTopic is the queue itself: %v, want ErrNoDestination", err)
	}
}

func TestTable_PlainAndJSON(t *testing.T) {
	now := time.Now()
	var buf bytes.Buffer
	tb := inspect.NewTable(&buf, false, func() time.Time { return now })
	if err := tb.Write(routed("a", "orders", message.ReasonUnacceptable, strings.Repeat("long ", 30), now.Add(-3*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"ID", "ORIGINAL TOPIC", "a ", "orders", "Unacceptable", "…", "3m ago", "MT_COMMAND"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// A message without rejection metadata is a native redrive, unless a
	// replay put it there (a peek of a source queue).
	buf.Reset()
	tb = inspect.NewTable(&buf, false, func() time.Time { return now })
	native := message.New("n", "orders", message.MTCommand, []byte("{}"))
	replayed := message.New("r", "orders", message.MTCommand, []byte("{}"))
	replayed.Header.Bag[message.KeyReplayedFrom] = "sqs://orders-dlq"
	_ = tb.Write(native)
	_ = tb.Write(replayed)
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "moved by broker redrive") || !strings.Contains(out, "replayed from sqs://orders-dlq") {
		t.Errorf("native and replayed rows:\n%s", out)
	}
	buf.Reset()
	j := inspect.NewJSONLines(&buf)
	m := routed("b", "orders", message.ReasonNone, "", now)
	m.Body = []byte{0xff, 0xfe}
	if err := j.Write(m); err != nil {
		t.Fatal(err)
	}
	_ = j.Flush()
	back, err := message.UnmarshalRecordJSON(bytes.TrimSpace(buf.Bytes()))
	if err != nil || !bytes.Equal(back.Body, m.Body) || back.Header.Bag[message.KeyOriginalTopic] != "orders" {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

// TestDescribe_RedactsTheRejectionMessage: a copy stored with a
// secret in its rejectionMessage (stamped before the rule, or by another
// writer) is shown, grouped and grepped without it.
func TestDescribe_RedactsTheRejectionMessage(t *testing.T) {
	m := routed("a", "orders", message.ReasonDeliveryError, "POST https://u:pw-SEKRIT@h/x?token=tok-SEKRIT: 500", time.Now())
	m.Header.Bag[message.KeyRejectionMessage] = "POST https://u:pw-SEKRIT@h/x?token=tok-SEKRIT: 500" // as an older version stored it
	if d := inspect.Describe(m); strings.Contains(d.RejectionMessage, "SEKRIT") || !strings.Contains(d.RejectionMessage, "token=REDACTED") {
		t.Fatalf("RejectionMessage = %q", d.RejectionMessage)
	}
}

// TestReplayCopy_AllowList: without To, a destination Allow refuses
// is ErrRefused (with the destination), one it allows is replayed, and a
// nil Allow allows any; To bypasses Allow.
func TestReplayCopy_AllowList(t *testing.T) {
	m := routed("a", "victim", message.ReasonDeliveryError, "x", time.Now())
	only := func(d string) bool { return d == "orders" }
	if _, dest, err := inspect.ReplayCopy(m, "sqs://dlq", "dlq", inspect.ReplayOptions{Allow: only}, time.Now()); !errors.Is(err, inspect.ErrRefused) || dest != "victim" {
		t.Errorf("forged originalTopic: dest %q err %v, want victim and ErrRefused", dest, err)
	}
	if _, dest, err := inspect.ReplayCopy(m, "sqs://dlq", "dlq", inspect.ReplayOptions{}, time.Now()); err != nil || dest != "victim" {
		t.Errorf("nil Allow: dest %q err %v", dest, err)
	}
	if _, dest, err := inspect.ReplayCopy(m, "sqs://dlq", "dlq", inspect.ReplayOptions{To: "staging", Allow: only}, time.Now()); err != nil || dest != "staging" {
		t.Errorf("--to: dest %q err %v", dest, err)
	}
	k := routed("b", "orders", message.ReasonDeliveryError, "x", time.Now())
	if _, dest, err := inspect.ReplayCopy(k, "sqs://dlq", "dlq", inspect.ReplayOptions{Allow: only}, time.Now()); err != nil || dest != "orders" {
		t.Errorf("known destination: dest %q err %v", dest, err)
	}
}

// TestReplayOutput_ForgedDestinationCredentialsAreMasked: an
// originalTopic is message content; one forged as a URL with credentials
// in its user-info and query is shown, in the peek and stats tables, the
// stats counts by topic, the replay progress lines and the refusal error,
// with them masked.
func TestReplayOutput_ForgedDestinationCredentialsAreMasked(t *testing.T) {
	const forged = "sqs://admin:pw-FORGED-1@evil.example/q?token=tok-FORGED-2"
	m := routed("a", forged, message.ReasonDeliveryError, "x", time.Now())
	var out bytes.Buffer
	tb := inspect.NewTable(&out, false, time.Now)
	if err := tb.Write(m); err != nil {
		t.Fatal(err)
	}
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := inspect.NewLines(&out)
	for _, o := range []inspect.Outcome{
		{ID: "a", Destination: forged, Refused: true},
		{ID: "a", Destination: forged, Refused: true, DryRun: true},
		{ID: "a", Destination: forged, DryRun: true},
		{ID: "a", Destination: forged, NewID: "b"},
	} {
		lines.Done(o)
	}
	_, _, err := inspect.ReplayCopy(m, "sqs://dlq", "dlq", inspect.ReplayOptions{Allow: func(string) bool { return false }}, time.Now())
	if err == nil {
		t.Fatal("a forged destination was not refused")
	}
	st := inspect.CollectMessages([]*message.Message{m}, inspect.Filter{})
	if err := st.WriteTable(&out, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String() + err.Error()
	if strings.Contains(text, "FORGED") || !strings.Contains(text, "sqs://REDACTED@evil.example/q?token=REDACTED") {
		t.Fatalf("a forged destination's credentials are shown:\n%s", text)
	}
}

// TestTable_MarksEveryFurtherCopyOfAnID: peek's table shows each stored
// copy of an id on its own row, the second and later marked "×N", and
// CopyCounts counts them for the console.
func TestTable_MarksEveryFurtherCopyOfAnID(t *testing.T) {
	now := time.Now()
	var buf bytes.Buffer
	tb := inspect.NewTable(&buf, false, func() time.Time { return now })
	m := routed("twice", "orders", message.ReasonDeliveryError, "declined", now)
	other := routed("once", "orders", message.ReasonDeliveryError, "declined", now)
	for _, x := range []*message.Message{m, other, m} {
		if err := tb.Write(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.Count(out, "twice") != 2 || !strings.Contains(out, "twice ×2") || strings.Contains(out, "once ×") {
		t.Errorf("table of two copies of twice and one of once:\n%s", out)
	}
	if n := inspect.CopyCounts([]*message.Message{m, other, m}); n["twice"] != 2 || n["once"] != 1 {
		t.Errorf("CopyCounts = %v, want twice 2, once 1", n)
	}
}

// TestJSONLines_ForgedDestinationCredentialsAreMasked: `dlq peek -o json`
// writes a stored originalTopic forged as a URL with credentials, and a
// rejection message holding one, masked as the peek table shows them; the
// stored message is left as it is and the rest of the record is kept.
func TestJSONLines_ForgedDestinationCredentialsAreMasked(t *testing.T) {
	const forged = "sqs://admin:pw-FORGED-1@evil.example/q?token=tok-FORGED-2"
	m := routed("a", forged, message.ReasonDeliveryError, "POST https://u:pw-FORGED-3@h/x: 500", time.Now())
	m.Header.Bag[message.KeyRejectionMessage] = "POST https://u:pw-FORGED-3@h/x: 500" // as an older version stored it
	var out bytes.Buffer
	j := inspect.NewJSONLines(&out)
	if err := j.Write(m); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	back, err := message.UnmarshalRecordJSON(bytes.TrimSpace(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "FORGED") || back.Header.Bag[message.KeyOriginalTopic] != "sqs://REDACTED@evil.example/q?token=REDACTED" {
		t.Fatalf("peek -o json shows a forged destination's credentials:\n%s", out.String())
	}
	if back.Header.MessageID != "a" || back.Header.Bag[message.KeyRejectionReason] != message.ReasonDeliveryError.String() {
		t.Errorf("record changed beyond the redaction: %+v", back.Header)
	}
	if m.Header.Bag[message.KeyOriginalTopic] != forged {
		t.Errorf("the message itself was changed: %v", m.Header.Bag[message.KeyOriginalTopic])
	}
	plain := routed("b", "orders", message.ReasonDeliveryError, "declined", time.Now())
	out.Reset()
	j = inspect.NewJSONLines(&out)
	_ = j.Write(plain)
	_ = j.Flush()
	if back, err := message.UnmarshalRecordJSON(bytes.TrimSpace(out.Bytes())); err != nil || back.Header.Bag[message.KeyOriginalTopic] != "orders" || back.Header.Bag[message.KeyRejectionMessage] != "declined" {
		t.Errorf("a plain record is not written as stored: %v %+v", err, back)
	}
}

// TestDescribe_DeliveriesAtRejection: a copy reads as delivered as many
// times as it was: a handler's rejection stamps the presented count (0 on
// the first delivery), a budget's the count the exhausting delivery raised,
// which its rejection message states; a routed copy's message states the
// deliveries on its own channel, its stamped count being the source's.
func TestDescribe_DeliveriesAtRejection(t *testing.T) {
	now := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		handled int
		r       message.Rejection
		want    int
	}{
		{"handler rejection on the first delivery", 0, message.Rejection{Reason: message.ReasonUnacceptable, Description: "no customer"}, 1},
		{"budget of 3", 3, message.Rejection{Reason: message.ReasonDeliveryError, Description: "redelivery budget exhausted: delivery count 3 reached requeueCount 3 (delivered 3 times, handled 3 times in this process): timeout"}, 3},
		{"budget of 1", 1, message.Rejection{Reason: message.ReasonDeliveryError, Description: "redelivery budget exhausted: delivery count 1 reached requeueCount 1 (delivered 1 time, handled 1 time in this process)"}, 1},
		{"routed copy", 5, message.Rejection{Reason: message.ReasonDeliveryError, Description: "redelivery budget exhausted: delivery 4 on this channel reached requeueCount 4 (a routed copy; stamped count 5 from orders; handled 4 times in this process)"}, 4},
		{"a handler's DeliveryError quoting no count", 2, message.Rejection{Reason: message.ReasonDeliveryError, Description: "delivered 9 times by a broken client"}, 3},
	} {
		m := message.New("d1", "orders", message.MTEvent, []byte(`{}`))
		m.Header.HandledCount = c.handled
		if got := inspect.Describe(message.Stamp(m, "orders-dlq", c.r, now)).Deliveries; got != c.want {
			t.Errorf("%s: Deliveries = %d, want %d", c.name, got, c.want)
		}
	}
}

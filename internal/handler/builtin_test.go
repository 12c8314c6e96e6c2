package handler

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// TestBuiltin_EachNameGivesItsOutcomeAndReason: each built-in handler
// returns its own outcome (log and ack acknowledge, defer defers, reject and
// unacceptable give their reasons).
func TestBuiltin_EachNameGivesItsOutcomeAndReason(t *testing.T) {
	cases := []struct {
		name    string
		outcome pump.Outcome
		reason  string
		err     error
	}{
		{BuiltinLog, pump.Ack, "", nil},
		{BuiltinAck, pump.Ack, "", nil},
		{BuiltinDefer, pump.Defer, "", nil},
		{BuiltinReject, pump.Reject, RejectReason, nil},
		{BuiltinFail, pump.Defer, "", ErrBuiltinFailure},
		{BuiltinUnacceptable, pump.Unacceptable, UnacceptableReason, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Builtin(c.name, nil)
			if err != nil {
				t.Fatalf("Builtin(%q): %v", c.name, err)
			}
			r := h(context.Background(), testMessage(0))
			if r.Outcome != c.outcome || r.Reason != c.reason || !errors.Is(r.Err, c.err) || (c.err == nil && r.Err != nil) {
				t.Fatalf("Builtin(%q) = %+v, want outcome %v reason %q err %v", c.name, r, c.outcome, c.reason, c.err)
			}
		})
	}
}

func TestBuiltin_UnknownNameListsValidOnes(t *testing.T) {
	_, err := Builtin("explode", nil)
	if err == nil {
		t.Fatal("Builtin(explode) succeeded")
	}
	for _, n := range BuiltinNames() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %q", err, n)
		}
	}
}

func TestBuiltin_LogWritesMessageFields(t *testing.T) {
	logger, lb := newTestLogger()
	h, err := Builtin(BuiltinLog, logger)
	if err != nil {
		t.Fatal(err)
	}
	m := testMessage(3)
	if r := h(context.Background(), m); r.Outcome != pump.Ack {
		t.Fatalf("log builtin returned %v, want ack", r.Outcome)
	}
	rec := lb.find(t, msgBuiltinLog)
	if rec["level"] != "INFO" || rec["message_id"] != m.Header.MessageID || rec["topic"] != "orders" ||
		rec["delivery_count"] != float64(3) || rec["body"] != `{"order":42}` {
		t.Fatalf("log record = %v", rec)
	}
}

func TestBuiltin_LogBodyPreviewIsBounded(t *testing.T) {
	logger, lb := newTestLogger()
	h, _ := Builtin(BuiltinLog, logger)
	m := testMessage(0)
	// 300 two-byte runes: the cut at 256 bytes falls on a rune boundary or
	// inside one, and must never leave half a rune.
	m.Body = []byte(strings.Repeat("é", 300) + "x")
	h(context.Background(), m)
	body, _ := lb.find(t, msgBuiltinLog)["body"].(string)
	if !strings.HasSuffix(body, message.TruncationMarker) || len(body) > bodyPreviewBytes || strings.ContainsRune(body, '\uFFFD') {
		t.Fatalf("preview = %q (%d bytes)", body, len(body))
	}
}

// A script is keyed by the presented delivery count, so it
// behaves the same however many replicas run it.
func TestScript_OutcomeByDeliveryCount_R1(t *testing.T) {
	h, err := Script(" defer, fail ,reject,unacceptable,ack ")
	if err != nil {
		t.Fatal(err)
	}
	want := []pump.Outcome{pump.Defer, pump.Defer, pump.Reject, pump.Unacceptable, pump.Ack, pump.Ack, pump.Ack}
	for count, w := range want {
		r := h(context.Background(), testMessage(count))
		if r.Outcome != w {
			t.Errorf("count %d: outcome %v, want %v", count, r.Outcome, w)
		}
		if count == 1 && !errors.Is(r.Err, ErrBuiltinFailure) {
			t.Errorf("count 1 (fail): err %v, want ErrBuiltinFailure", r.Err)
		}
		if count == 2 && r.Reason != RejectReason {
			t.Errorf("count 2 (reject): reason %q", r.Reason)
		}
	}
	// Stateless: asking again for count 0 gives the first item again.
	if r := h(context.Background(), testMessage(0)); r.Outcome != pump.Defer {
		t.Errorf("count 0 again: %v, want defer", r.Outcome)
	}
	// A negative count (never presented, but never a panic) reads item 0.
	if r := h(context.Background(), testMessage(-5)); r.Outcome != pump.Defer {
		t.Errorf("count -5: %v, want defer", r.Outcome)
	}
}

// TestScript_RefusesBadSpecsListingValidItems: an empty script, an empty
// item, an unknown item or a wrongly cased one is refused with an error that
// lists the valid items.
func TestScript_RefusesBadSpecsListingValidItems(t *testing.T) {
	for _, spec := range []string{"", "  ", "defer,,ack", "defer,explode", "Ack"} {
		if _, err := Script(spec); err == nil {
			t.Errorf("Script(%q) succeeded", spec)
		} else if !strings.Contains(err.Error(), "unacceptable") {
			t.Errorf("Script(%q) error %q does not list the valid items", spec, err)
		}
	}
}

func TestScriptItems_LogItemLogsAndAcks(t *testing.T) {
	logger, lb := newTestLogger()
	h, err := ScriptItems([]string{"defer", "log"}, logger)
	if err != nil {
		t.Fatal(err)
	}
	if r := h(context.Background(), testMessage(0)); r.Outcome != pump.Defer {
		t.Fatalf("count 0: %v", r.Outcome)
	}
	if r := h(context.Background(), testMessage(1)); r.Outcome != pump.Ack {
		t.Fatalf("count 1: %v", r.Outcome)
	}
	if rec := lb.find(t, msgBuiltinLog); rec["delivery_count"] != float64(1) {
		t.Fatalf("log record = %v", rec)
	}
	if _, err := ScriptItems(nil, nil); err == nil {
		t.Fatal("ScriptItems(nil) succeeded")
	}
}

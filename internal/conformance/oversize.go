package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// rowOversizeCopy is the row of a routed copy over its broker's
// limit.
const rowOversizeCopy = "R-19/oversize-copy"

// oversizeBehaviours are the size-limit routing rows.
var oversizeBehaviours = []Behaviour{
	{rowOversizeCopy, "R-19, ADR 0004", "a message exactly at its broker's limit (SQS: 1 MiB; Pub/Sub: 100 attributes; RocketMQ: 16 KiB of properties) is rejected: its routed copy, over the limit with the rejection metadata, is refused before any call though the emulator would take it; the original is released (not lost) with an Error naming it, and nothing reaches the dead-letter destination", KindPump},
}

// oversizeFixture is implemented by fixtures whose source can carry a
// message at its broker's limit, so that its routed copy is over it.
type oversizeFixture interface{ CopyCanExceedLimit() bool }

// limitPadder is implemented by the channels of an oversizeFixture:
// PadToLimit pads m (sent to the channel by Send) so that it is exactly at
// the broker's limit, and its routed copy over it.
type limitPadder interface {
	PadToLimit(t testing.TB, m *message.Message)
}

// oversizeReason is the handler's rejection reason in the row.
const oversizeReason = "conformance rejects a message at the broker's limit"

// runOversize runs the size-limit routing row over f in variant v
// (RunRows calls it; fixtures whose source cannot carry such a message have
// no cell: an SNS topic takes 256 KiB, less than a queue's 1 MiB).
func runOversize(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	if of, ok := f.(oversizeFixture); !ok || !of.CopyCanExceedLimit() {
		return
	}
	g.Run(t, rowOversizeCopy, f, v, func(t *testing.T) {
		logger, logs := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: 3, DeadLetter: true, Logger: logger})
		lp, ok := ch.(limitPadder)
		if !ok {
			t.Fatalf("the %s channel cannot pad a message to its limit", f.Configuration())
		}
		id := uniqueID(t)
		m := newMessage(f, id)
		lp.PadToLimit(t, m)
		ch.Send(t, m)
		buffer, _ := scale(v)
		rec := NewRecordingConsumer(ch.Consumer(t, buffer))
		counter := &DispatchCounter{}
		reject := func(context.Context, *message.Message) pump.Result {
			return pump.Result{Outcome: pump.Reject, Reason: oversizeReason}
		}
		running := Start(t, rec.View(t), counter.Wrap(reject), pumpOptions(v, 3), pump.LogObserver{Logger: logger})
		released := func() (RejectCall, bool) {
			for _, rj := range rec.Rejects(id) {
				if rj.Result.Released {
					return rj, true
				}
			}
			return RejectCall{}, false
		}
		polltest.Until(t, waitLong, "the routed copy refused and the original released", func() bool { _, ok := released(); return ok })
		running.Quit(t)
		rj, _ := released()
		if !errors.Is(rj.Result.Err, broker.ErrTooLarge) {
			t.Errorf("the routing failed with %v, want broker.ErrTooLarge (refused before the call)", rj.Result.Err)
		}
		found := false
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, broker.LogRoutingPermanent) && strings.Contains(line, id) && strings.Contains(line, `"level":"ERROR"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %q Error naming %s:\n%s", broker.LogRoutingPermanent, id, logs.String())
		}
		for _, d := range Drain(t, ch.DeadLetter(t), 2*time.Second, 10) {
			if d.OriginalID() == id {
				t.Errorf("the routed copy of %s reached the dead-letter destination: over the broker's limit, a real broker refuses it", id)
			}
		}
		if n := counter.Count(id); n != 1 {
			t.Errorf("handler invoked %d times, want 1 (the original is released with the longest delay)", n)
		}
	})
}

// init registers the size-limit routing row.
func init() { registerRows(oversizeBehaviours...) }

// padBody pads m's JSON body with a "pad" member so that size, m's size as
// its broker counts it, is exactly limit.
func padBody(t testing.TB, m *message.Message, limit int, size func() int) {
	t.Helper()
	prefix := strings.TrimSuffix(string(m.Body), "}") + `,"pad":"`
	m.Body = []byte(prefix + `"}`)
	pad := limit - size()
	if pad < 0 {
		t.Fatalf("the message is %d bytes over the %d-byte limit before padding", -pad, limit)
	}
	m.Body = []byte(prefix + strings.Repeat("x", pad) + `"}`)
	if got := size(); got != limit {
		t.Fatalf("the padded message is %d bytes, want exactly %d", got, limit)
	}
}

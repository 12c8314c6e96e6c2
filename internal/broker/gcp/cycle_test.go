package gcp

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// cycleRejections counts the rejected events of runs: routed, a copy
// published to the dead-letter topic; refused, a rejection the Router held
// back because its destination was already on the message's
// rejectionPath. Any other rejected event (a failed routing) fails the
// test: the cycle must be ended by the refusal, not by an error.
func cycleRejections(t *testing.T, runs []*pumptest.Run) (routed, refused int) {
	t.Helper()
	for _, r := range runs {
		for _, e := range r.Of(pump.EventRejected) {
			switch {
			case e.Permanent && errors.Is(e.Err, broker.ErrRejectionCycle):
				refused++
			case e.Err == nil:
				routed++
			default:
				t.Errorf("rejection of %s failed: %v", e.MessageID(), e.Err)
			}
		}
	}
	return routed, refused
}

// TestRejectionCycleIsBounded (Google's emulator, both consumers, both
// pump variants): two subscriptions whose deadLetterRoutingKeys are each
// other's topics and a handler that rejects everything. One message sent
// to cyc-a: it is routed to cyc-b, back to cyc-a, and there the Router
// holds it (cyc-b is already on its rejectionPath): released with the
// longest delay (600 s), one Error naming it, and no routing follows
// (docs/adr/0004 decision 12). Without the refusal the message goes round
// for ever, a new copy each time.
//
// The emulator can redeliver a message whose acknowledgement it lost and
// reorders what it redelivers, so a second copy of the message may go
// round: each copy ends the same way, two routings then one refusal. The
// test asserts that bound (routings at most two per refusal, plus two for
// a copy still on its way, and at most six in all) for a window past the
// subscriptions' ack deadlines, not an exact count; a real loop passes it
// within a second.
func TestRejectionCycleIsBounded(t *testing.T) {
	t.Parallel()
	const maxRouted = 6 // three copies round: more than the emulator ever duplicated
	for _, md := range modes {
		for _, v := range pumptest.Variants {
			t.Run(string(md)+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				hops := []struct{ topic, deadLetter string }{{"cyc-a", "cyc-b"}, {"cyc-b", "cyc-a"}}
				var runs []*pumptest.Run
				for _, h := range hops {
					sub := h.topic + "-sub"
					e.channels(t, ChannelOptions{Topic: h.topic, Subscription: sub, RequeueCount: -1, AckDeadline: gcpLease})
					c := e.consumer(t, md, ConsumerOptions{Subscription: sub, BufferSize: 1, AckDeadline: gcpLease, DeadLetterTopic: h.deadLetter})
					opts := pumptest.Options(v, 1)
					opts.Subscription = sub
					runs = append(runs, pumptest.Start(t, c, opts, func(context.Context, *message.Message) pump.Result {
						return pump.Result{Outcome: pump.Reject, Reason: "poison"}
					}))
				}
				e.send(t, "cyc-a", newMsg("poison-1"))
				pumptest.WaitUntil(t, 60*time.Second, "the cycle refused", func() bool {
					routed, refused := cycleRejections(t, runs)
					return refused > 0 || routed > maxRouted
				})
				if routed, refused := cycleRejections(t, runs); refused == 0 {
					t.Fatalf("%d routings and no refusal: the message goes round the cycle", routed)
				}
				// Past the ack deadline the emulator granted either
				// subscription: a routing loop would have gone round many
				// times; a copy the emulator redelivered ends as the first.
				window := max(e.quietWindow(t, "cyc-a-sub"), e.quietWindow(t, "cyc-b-sub"))
				pumptest.Stays(t, window, "routings unbounded: the message goes round the cycle", func() bool {
					routed, refused := cycleRejections(t, runs)
					return routed <= 2*refused+2 && routed <= maxRouted
				})
				for _, r := range runs {
					r.Stop(t)
				}
				routed, refused := cycleRejections(t, runs)
				t.Logf("%d routings, %d refusals", routed, refused)
				if routed < 2 {
					t.Errorf("%d routings before the refusal, want 2 (cyc-a to cyc-b, cyc-b to cyc-a)", routed)
				}
				recs := e.logs.find(slog.LevelError, broker.LogRoutingCycle)
				if len(recs) != refused {
					t.Errorf("%d cycle Errors for %d refusals, want one each", len(recs), refused)
				}
				for _, rec := range recs {
					if attr(rec, "message_id") != "poison-1" || attr(rec, "destination") != "cyc-b" || attr(rec, "rejection_path") != "cyc-b,cyc-a" {
						t.Errorf("cycle Error %q, want message_id poison-1, destination cyc-b, rejection_path cyc-b,cyc-a", recordText(rec))
					}
				}
			})
		}
	}
}

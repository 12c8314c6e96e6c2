package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// restartBehaviours is the rolling-restart row: one of two replicas
// stops as consume stops on SIGTERM and is replaced, and nothing it
// acknowledged is handled again (docs/adr/0002-pubsub-rejection-and-channels.md).
var restartBehaviours = []Behaviour{
	{"R-4/replica-stopped", "R-4", "two consumers on one channel, one stopped as consume stops (pump drained, consumer closed) just after it acknowledged a message, and replaced: " +
		"nothing acknowledged is handled again, and each message sent after the restart is acknowledged within three quarters of the lease", KindPump},
}

// runRestart runs R-4/replica-stopped over f in variant v (RunRows calls it).
//
// A replica with an acknowledging handler acknowledges a message; a
// second replica starts, and the first is stopped at once (its pump quits,
// which drains it, and its consumer is closed), inside any acknowledgement
// batch its client keeps (the Pub/Sub stream client sends
// acknowledgements every 100 ms). A replacement starts. Each message sent after that must be acknowledged
// within three quarters of the lease: a message handed to a consumer that
// is gone (a receive left running on the broker's side, a stream the broker
// still thinks open) comes back only after a lease. Nothing may be handled
// twice for a quiet window after: an acknowledgement lost at the stop
// brings its message back once its lease lapses.
func runRestart(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	g.Run(t, "R-4/replica-stopped", f, v, func(t *testing.T) {
		logger, _ := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: -1, Lease: shortLease, Logger: logger})
		base := uniqueID(t)
		tally := &replicaTally{}
		buffer, _ := scale(v)
		opts := pumpOptions(v, -1)
		recs := map[string]*RecordingConsumer{}
		var sent []string
		start := func(replica string) (*Running, broker.Consumer) {
			c := ch.Consumer(t, buffer)
			recs[replica] = NewRecordingConsumer(c)
			h := func(_ context.Context, m *message.Message) pump.Result {
				tally.add(replica, m.OriginalID())
				return pump.Result{Outcome: pump.Ack}
			}
			return Start(t, recs[replica].View(t), h, opts, pump.LogObserver{Logger: logger.With("replica", replica)}), c
		}
		acks := func(replicas ...string) int {
			n := 0
			for _, r := range replicas {
				for _, id := range sent {
					n += recs[r].Acks(id)
				}
			}
			return n
		}
		send := func(id string) {
			sent = append(sent, id)
			ch.Send(t, newMessage(f, id))
		}
		// The first replica takes a message alone (brokers need not share
		// messages fairly between two receivers); the second starts once it
		// has acknowledged it, and the first is stopped at once.
		stopped, stoppedConsumer := start("stopped")
		send(base + "-before")
		polltest.Until(t, waitShort, "the first replica acknowledging its message", func() bool { return acks("stopped") == 1 })
		survivor, _ := start("survivor")
		stopped.Quit(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := stoppedConsumer.Close(ctx); err != nil {
			t.Errorf("close the stopped replica's consumer: %v", err)
		}
		restarted, _ := start("restarted")
		lease := leaseOf(ch, recs["restarted"].Consumer)
		if lease <= 0 {
			lease = ch.RedeliveryBound()
		}
		prompt := lease * 3 / 4
		for i := range 3 {
			id := fmt.Sprintf("%s-after-%d", base, i)
			want := acks("survivor", "restarted") + 1
			send(id)
			polltest.Until(t, prompt, id+" acknowledged by a live replica (a message handed to a consumer that is gone comes back only after a lease)", func() bool {
				return acks("survivor", "restarted") >= want
			})
		}
		polltest.Stays(t, quietWindow(ch), "a message was handled twice across the replicas (an acknowledgement was lost at the stop)", func() bool {
			for _, id := range sent {
				n := 0
				for _, r := range []string{"stopped", "survivor", "restarted"} {
					n += tally.of(r, id)
				}
				if n > 1 {
					return false
				}
			}
			return true
		})
		survivor.Quit(t)
		restarted.Quit(t)
		t.Logf("invocations by replica: %v", tally.by)
		for _, id := range sent {
			n := 0
			for _, r := range []string{"stopped", "survivor", "restarted"} {
				n += tally.of(r, id)
			}
			if n != 1 {
				t.Errorf("%s handled %d times across the replicas, want once", id, n)
			}
		}
	})
}

// init registers the restart row after the scale-out row.
func init() { registerRows(restartBehaviours...) }

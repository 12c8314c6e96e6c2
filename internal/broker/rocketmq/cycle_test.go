package rocketmq_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// TestRejectionCycleIsBounded (the RocketMQ test broker, both pump
// variants): two consumer groups whose deadLetterRoutingKeys are each
// other's topics and a handler that rejects everything. One message sent
// to cyc-a: it is routed to cyc-b, back to cyc-a, and there the Router
// holds it (cyc-b is already on its rejectionPath): released with the
// longest delay, one Error naming it, no SendMessage follows, and nothing
// is lost (docs/adr/0004 decision 12). Without the refusal the message
// goes round for ever, a new copy each time.
func TestRejectionCycleIsBounded(t *testing.T) {
	const maxRouted = 6 // past it, the message is going round
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "cyc-a", "cyc-b")
			log, logs := newLogger()
			hops := []struct{ topic, group, deadLetter string }{{"cyc-a", "g-a", "cyc-b"}, {"cyc-b", "g-b", "cyc-a"}}
			var runs []*pumptest.Run
			for _, h := range hops {
				c := e.consumer(rocketmq.ConsumerOptions{Topic: h.topic, ConsumerGroup: h.group, DeadLetterTopic: h.deadLetter, Logger: log, InvisibleDuration: rmqLease})
				opts := pumptest.Options(v, 1)
				opts.Subscription = h.group
				runs = append(runs, pumptest.Start(t, c, opts, func(context.Context, *message.Message) pump.Result {
					return pump.Result{Outcome: pump.Reject, Reason: "poison"}
				}))
			}
			rejections := func() (routed, refused int) {
				for _, r := range runs {
					for _, ev := range r.Of(pump.EventRejected) {
						switch {
						case ev.Permanent && errors.Is(ev.Err, broker.ErrRejectionCycle):
							refused++
						case ev.Err == nil:
							routed++
						default:
							t.Errorf("rejection of %s failed: %v", ev.MessageID(), ev.Err)
						}
					}
				}
				return routed, refused
			}
			e.send("cyc-a", "poison-1")
			sends := e.srv.Calls("SendMessage")
			pumptest.WaitUntil(t, 30*time.Second, "the cycle refused", func() bool {
				routed, refused := rejections()
				return refused > 0 || routed > maxRouted
			})
			if routed, refused := rejections(); refused == 0 {
				t.Fatalf("%d routings and no refusal: the message goes round the cycle", routed)
			}
			// Several invisible durations: no routing, no handler run follows.
			// (cyc-b's routing is reported once its acknowledgement returns,
			// which may be after cyc-a's refusal.)
			pumptest.Stays(t, 2*rmqLease, "a rejection after the refusal", func() bool {
				routed, refused := rejections()
				return routed <= 2 && refused == 1
			})
			for _, r := range runs {
				r.Stop(t)
			}
			if routed, _ := rejections(); routed != 2 {
				t.Errorf("%d routings, want 2 (cyc-a to cyc-b, cyc-b to cyc-a)", routed)
			}
			if n := e.srv.Calls("SendMessage") - sends; n != 2 {
				t.Errorf("%d SendMessage after the first, want 2 (cyc-a to cyc-b, cyc-b to cyc-a)", n)
			}
			var cycles []string
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, `msg="`+broker.LogRoutingCycle+`"`) {
					cycles = append(cycles, line)
				}
			}
			if len(cycles) != 1 || !strings.Contains(cycles[0], "level=ERROR") || !strings.Contains(cycles[0], "message_id=poison-1") ||
				!strings.Contains(cycles[0], "destination=cyc-b") || !strings.Contains(cycles[0], "rejection_path=cyc-b,cyc-a") {
				t.Errorf("cycle records %q, want one Error naming poison-1, destination cyc-b and the path cyc-b,cyc-a", cycles)
			}
			// Never lost, never duplicated: g-a still holds one message
			// (the copy back on cyc-a, released), g-b none.
			if a, b := e.srv.Pending("cyc-a", "g-a"), e.srv.Pending("cyc-b", "g-b"); a != 1 || b != 0 {
				t.Errorf("g-a holds %d of cyc-a and g-b %d of cyc-b, want 1 and 0", a, b)
			}
		})
	}
}

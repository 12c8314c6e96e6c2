package sqs

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// TestRejectionCycleIsBounded (fauxqs, both pump variants): two
// subscriptions whose deadLetterRoutingKeys are each other's queues, each
// queue with a native redrive policy (every routed copy is a new message,
// so the native limit cannot end the loop), and one queue whose
// deadLetterRoutingKey names it with '_' for '.' (one queue to SQS). One
// message sent: it is routed round once, then the subscription whose
// rejection would route it to a queue on its rejectionPath again leaves
// it on its own queue, released with the longest delay, with one Error;
// no SendMessage follows and nothing is lost (docs/adr/0004 decision 12).
// One send used to make thousands of publish-and-delete rounds.
func TestRejectionCycleIsBounded(t *testing.T) {
	type hop struct{ channel, deadLetter string }
	cases := []struct {
		name   string
		hops   func(a, b string) []hop
		routed int // routings before the refusal
	}{
		{"two queues", func(a, b string) []hop { return []hop{{a, b}, {b, a}} }, 2},
		{"one queue named two ways", func(a, _ string) []hop { return []hop{{a + ".op", a + "_op"}} }, 1},
	}
	for _, tc := range cases {
		for _, v := range pumptest.Variants {
			t.Run(tc.name+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				var sends atomic.Int64
				c, _ := faultyClients(t, func(op, _ string) error {
					if strings.HasPrefix(op, "SendMessage") {
						sends.Add(1)
					}
					return nil
				})
				sink, logger := newSink()
				hops := tc.hops(uniq("cyc-a"), uniq("cyc-b"))
				var runs []*pumptest.Run
				for _, h := range hops {
					k := setup(t, c, ChannelOptions{Queue: h.channel, DeadLetter: h.deadLetter,
						RedrivePolicy: &RedrivePolicy{DeadLetterQueue: h.channel + "-native", MaxReceiveCount: 5}},
						ConsumerOptions{BufferSize: 1, VisibilityTimeout: 30 * time.Second, Logger: logger})
					opts := pumptest.Options(v, 1)
					opts.Subscription = h.channel
					runs = append(runs, pumptest.Start(t, k, opts, func(context.Context, *message.Message) pump.Result {
						return pump.Result{Outcome: pump.Reject, Reason: "poison"}
					}))
				}
				first := QueueName(hops[0].channel, false)
				m := newMessage(first)
				// Counted before the send: the pump may receive and route the
				// message before this goroutine runs again.
				sent := sends.Load() + 1
				send(t, c, ProducerOptions{}, m)
				pumptest.WaitUntil(t, 30*time.Second, "the cycle refused", func() bool {
					_, ok := sink.find(slog.LevelError, broker.LogRoutingCycle)
					return ok
				})
				// Past a receive wait of every pump: no routing follows.
				pumptest.Stays(t, 3*time.Second, "no SendMessage after the refusal", func() bool {
					return sends.Load()-sent == int64(tc.routed)
				})
				for _, r := range runs {
					r.Stop(t)
				}
				rec, _ := sink.find(slog.LevelError, broker.LogRoutingCycle)
				if rec.Attrs["message_id"] != m.Header.MessageID || rec.Attrs["destination"] != QueueName(hops[0].deadLetter, false) {
					t.Errorf("cycle Error %v: want message_id %s and destination %s", rec.Attrs, m.Header.MessageID, hops[0].deadLetter)
				}
				total := 0
				for _, h := range hops {
					total += depth(t, c, QueueName(h.channel, false)) + depth(t, c, QueueName(h.channel+"-native", false))
				}
				if n := depth(t, c, first); n != 1 || total != 1 {
					t.Errorf("%s holds %d and all queues %d, want the one message on %s (never lost, never duplicated)", first, n, total, first)
				}
			})
		}
	}
}

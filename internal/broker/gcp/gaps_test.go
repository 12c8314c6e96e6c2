package gcp

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// TestDeferralGaps_HoldPlusRetryPolicy (both consumers, both pump
// variants, Google's emulator): the gaps between deliveries of a message a
// handler defers with requeueDelay d are what docs/commands/consume.md
// says. Every gap is at least d (the consumer holds the message for d:
// stream, then Nacks; pull, ModifyAckDeadline d). With no RetryPolicy on
// the subscription the gaps are d. With the RetryPolicy makeChannels
// create gives it (minimum d, maximum maxRequeueDelay) the service's
// back-off is added after the hold, since it runs from the Nack or the
// lapsed deadline: the second gap is at least d + d, and none is longer
// than d + maxRequeueDelay (plus 3 s for the emulator's whole-second
// granularity and a loaded machine). On the emulator the first
// redelivery comes with no back-off, so the first gap is d.
func TestDeferralGaps_HoldPlusRetryPolicy(t *testing.T) {
	t.Parallel()
	const (
		d     = 2 * time.Second
		maxD  = 4 * time.Second
		slack = 3 * time.Second
		n     = 3 // deliveries: two gaps, the second the first with a back-off; fewer Nacks than the emulator drops redeliveries after under load
	)
	for _, policy := range []bool{false, true} {
		name := "no-retry-policy"
		o := ChannelOptions{Topic: "gaps", Subscription: "gaps-sub", RequeueCount: -1}
		if policy {
			name = "retry-policy"
			o.RequeueDelay, o.MaxRequeueDelay = d, maxD
		}
		for _, md := range modes {
			for _, v := range pumptest.Variants {
				t.Run(name+"/"+string(md)+"/"+string(v), func(t *testing.T) {
					t.Parallel()
					e := newEnv(t)
					e.channels(t, o)
					c := e.consumer(t, md, ConsumerOptions{Subscription: "gaps-sub", BufferSize: 1})
					var mu sync.Mutex
					var at []time.Time
					opts := pumptest.Options(v, 1)
					opts.RequeueDelay = d
					r := pumptest.Start(t, c, opts, func(context.Context, *message.Message) pump.Result {
						mu.Lock()
						defer mu.Unlock()
						at = append(at, time.Now())
						if len(at) >= n {
							return pump.Result{Outcome: pump.Ack}
						}
						return pump.Result{Outcome: pump.Defer}
					})
					e.send(t, "gaps", newMsg("gap-1"))
					// Every delivery must come: a redelivery the emulator
					// drops fails the test rather than shortening it.
					pumptest.WaitUntil(t, time.Duration(n)*(d+maxD+slack)+20*time.Second, "every delivery", func() bool {
						mu.Lock()
						defer mu.Unlock()
						return len(at) >= n
					})
					r.Stop(t)
					gaps := make([]time.Duration, 0, n-1)
					for i := 1; i < n; i++ {
						gaps = append(gaps, at[i].Sub(at[i-1]).Round(100*time.Millisecond))
					}
					t.Logf("%s %s %s: gaps %v", name, md, v, gaps)
					longest := d + slack
					if policy {
						longest = d + maxD + slack
					}
					for i, g := range gaps {
						if g < d-500*time.Millisecond || g > longest {
							t.Errorf("gap %d = %v, want %v..%v (gaps %v)", i+1, g, d, longest, gaps)
						}
					}
					if policy && gaps[1] < 2*d-500*time.Millisecond {
						t.Errorf("second gap %v, want at least %v: the RetryPolicy's back-off (at least %v) comes after the %v hold (gaps %v)", gaps[1], 2*d, d, d, gaps)
					}
				})
			}
		}
	}
}

package pump_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// A Proactor worker takes a received batch of keyless messages as one run,
// and a worker with nothing to do takes part of another's run: no keyless
// message waits behind a running handler while a worker is idle. Four
// keyless messages received in one batch on four performers run at once:
// each handler waits until all four have started, so a message left
// waiting behind another's handler fails the test at its deadline.
func TestProactorIdleWorkersShareAReceivedBatch(t *testing.T) {
	const n = 4
	for round := range 5 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			e := newEnv(t, memory.ConsumerOptions{BufferSize: 10})
			for i := range n {
				e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
			}
			var mu sync.Mutex
			started := map[string]bool{}
			all := make(chan struct{})
			opts := fastOptions(pump.Proactor)
			opts.NoOfPerformers = n
			opts.BufferSize = 10
			e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
				mu.Lock()
				started[m.Header.MessageID] = true
				if len(started) == n {
					close(all)
				}
				mu.Unlock()
				select {
				case <-all:
					return pump.Result{Outcome: pump.Ack}
				case <-time.After(10 * time.Second):
					return pump.Result{Outcome: pump.Defer}
				case <-ctx.Done():
					return pump.Result{Outcome: pump.Defer}
				}
			})
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("after 10 s only %d of the %d messages had started (%v): the others waited behind a running handler while workers were idle", len(started), n, started)
			}
		})
	}
}

package sqs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// With lease extension off, one performer, bufferSize 1 and an
// acknowledging handler that takes two and a half visibility timeouts,
// the message is handled once in both variants and every acknowledgement
// sent with a receipt whose lease had lapsed is reported as a stale
// settle, never counted as acknowledged; nothing is dead-lettered.
func TestStaleAcknowledgementReportedNotCounted_ExtensionOff(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			q := uniq("stale-ack-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: q + "-dlq"}, ConsumerOptions{BufferSize: 1, VisibilityTimeout: 2 * time.Second})
			m := newMessage(q)
			send(t, c, ProducerOptions{}, m)
			opts := pumptest.Options(v, 1)
			opts.MaxLeaseExtension = -1
			opts.RequeueCount = 3
			var mu sync.Mutex
			var runs []int
			r := pumptest.Start(t, k, opts, func(ctx context.Context, m *message.Message) pump.Result {
				mu.Lock()
				runs = append(runs, m.DeliveryAttempt)
				mu.Unlock()
				pumptest.SleepFor(ctx, 5*time.Second)
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 30*time.Second, "an acknowledgement reported as stale", func() bool { return lapsedAcks(r.Of(pump.EventStaleSettle)) > 0 })
			time.Sleep(8 * time.Second) // a later delivery would be back within a lease and a long poll
			r.Stop(t)
			mu.Lock()
			got := append([]int(nil), runs...)
			mu.Unlock()
			if len(got) != 1 {
				t.Errorf("handler ran for deliveries %v, want once", got)
			}
			if n := r.Count(pump.EventAcknowledged); n > 1 {
				t.Errorf("acknowledged = %d, want at most 1 (the later delivery's own, live receipt)", n)
			}
			if n := r.Count(pump.EventRejected); n != 0 {
				t.Errorf("rejected %d times, want never: the handler acknowledged it", n)
			}
			if left := readAll(t, c, q); len(left) != 0 {
				t.Errorf("source still holds %d messages", len(left))
			}
			logs := r.LogText()
			want := fmt.Sprintf(`"level":"WARN","msg":%q`, pump.LogLapsedSettle)
			if !strings.Contains(logs, want) || !strings.Contains(logs, m.Header.MessageID) {
				t.Errorf("log lacks a WARN %q naming %s:\n%s", pump.LogLapsedSettle, m.Header.MessageID, logs)
			}
		})
	}
}

// lapsedAcks counts the acknowledgements reported as stale because their
// receipt had lapsed by the pump's lease clock.
func lapsedAcks(es []pump.Event) int {
	n := 0
	for _, e := range es {
		if e.EndsFlight && e.Outcome == pump.Ack && errors.Is(e.Err, pump.ErrLapsedReceipt) {
			n++
		}
	}
	return n
}

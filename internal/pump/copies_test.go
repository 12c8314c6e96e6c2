package pump_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// Two stored copies of one message id (a duplicate delivery, a message
// sent twice) deferred side by side until the budget of 3 routes each: the
// rejection message of each copy says what happened to that copy,
// "(delivered 3 times, handled 3 times in this process)". The handler runs of the
// other copy are not counted in (the first copy routed would say 5 or 6
// runs, more than its deliveries), nor lost when the other copy is routed
// first (the second would say 1 or 2).
func TestBudgetTextCountsEachStoredCopyOfAnID_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true, BufferSize: 10})
		e.publish(t, srcQueue, "m1", "")
		e.publish(t, srcQueue, "m1", "")
		opts := fastOptions(v)
		opts.RequeueCount = 3
		e.start(t, opts, func(context.Context, *message.Message) pump.Result {
			return pump.Result{Outcome: pump.Defer}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if got := e.calls.Load(); got != 6 {
			t.Fatalf("handler invocations = %d, want 3 for each copy", got)
		}
		dl := e.receiveAll(t, dlqQueue)
		if len(dl) != 2 {
			t.Fatalf("dead-letter queue holds %d messages, want both copies", len(dl))
		}
		for _, m := range dl {
			desc, _ := m.Header.Bag.String(message.KeyRejectionMessage)
			if !strings.Contains(desc, "(delivered 3 times, handled 3 times in this process)") {
				t.Errorf("a copy's rejection message %q, want it to count that copy's deliveries and runs (3 and 3)", desc)
			}
		}
	})
}

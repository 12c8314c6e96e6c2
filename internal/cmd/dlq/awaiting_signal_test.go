package dlq_test

import (
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
)

// TestDLQPeek_InterruptSaysHowLongItWaits: `brighter dlq peek --wait 8s`
// interrupted while its long poll waits on an empty SQS queue (fauxqs)
// waits for that receive, so nothing it takes is left invisible, and the
// line it logs on the signal says so and for how long (up_to, at most
// --wait); it then exits 130 within that time.
func TestDLQPeek_InterruptSaysHowLongItWaits(t *testing.T) {
	t.Parallel()
	dlq, id, conn := dlqtest.OneDeadLetter(t, "aw")
	// The record is printed once the first receive has been visited; the
	// second receive (the long poll) starts right after it.
	p := dlqtest.StartPeek(t, "brighter", dlq, id, conn, "--wait", "8s")
	// Time for the long poll to begin: nothing outside brighter can see
	// that its second receive is waiting on fauxqs, and the interrupt must
	// find it waiting. A second is well inside --wait 8s, so the receive
	// still has most of its wait left (up_to) when the signal comes.
	time.Sleep(time.Second)
	p.Signal(syscall.SIGINT)
	code, took := p.Wait(t)
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, p.Stderr.String())
	}
	logs := p.Stderr.String()
	m := regexp.MustCompile(regexp.QuoteMeta(shared.LogDLQAwaitingReceive) + `" source=sqs://` + dlq + ` up_to=(\d+)s`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no line saying the stop waits for the receive in flight, and how long; stderr:\n%s", logs)
	}
	var upTo int
	_, _ = fmt.Sscan(m[1], &upTo)
	if upTo < 1 || upTo > 8 {
		t.Errorf("up_to=%ds, want 1s..8s (what is left of --wait 8s)", upTo)
	}
	if took > time.Duration(upTo)*time.Second+3*time.Second {
		t.Errorf("the stop took %s, more than the %ds it said", took, upTo)
	}
}

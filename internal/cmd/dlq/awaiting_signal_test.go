package dlq_test

import (
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
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
	run, p, conn := dlqtest.FauxqsQueues(t, "aw", "dlq")
	dlq := "dlq-" + run
	if err := p.Send(t.Context(), dlqtest.Stamped("aw-"+run, "orders", dlq)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("brighter", append([]string{"dlq", "peek", "sqs://" + dlq, "--wait", "8s", "-o", "json"}, conn...)...)
	cmd.Dir, cmd.Env = t.TempDir(), cmdtest.Env()
	var stdout, stderr cmdtest.LockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited, err := cmdtest.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	// The record is printed once the first receive has been visited; the
	// second receive (the long poll) starts right after it.
	deadline := time.Now().Add(30 * time.Second)
	for !regexp.MustCompile(`aw-` + run).MatchString(stdout.String()) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("peek printed no row in 30s; stderr:\n%s", stderr.String())
		}
		select {
		case err := <-exited:
			t.Fatalf("peek exited (%v) before its long poll; stderr:\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	// Time for the long poll to begin: nothing outside brighter can see
	// that its second receive is waiting on fauxqs, and the interrupt must
	// find it waiting. A second is well inside --wait 8s, so the receive
	// still has most of its wait left (up_to) when the signal comes.
	time.Sleep(time.Second)
	signalled := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("peek still running a minute after its signal; stderr:\n%s", stderr.String())
	}
	took := time.Since(signalled)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130; stderr:\n%s", err, stderr.String())
	}
	logs := stderr.String()
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

package dlq_test

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQPeek_SIGHUPStopsAsSIGTERM: a SIGHUP (the terminal closed, an ssh
// session dropped) sent to `brighter dlq peek` on an SQS queue (fauxqs)
// while its scan holds a message stops it cleanly as SIGTERM does: exit
// 130, and the message it held is visible again at once (not after
// --visibility), so a second peek right after reads it.
func TestDLQPeek_SIGHUPStopsAsSIGTERM(t *testing.T) {
	t.Parallel()
	run, p, conn := dlqtest.FauxqsQueues(t, "hup", "dlq")
	dlq := "dlq-" + run
	id := "hup-" + run
	if err := p.Send(t.Context(), dlqtest.Stamped(id, "orders", dlq)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("brighter", append([]string{"dlq", "peek", "sqs://" + dlq, "--wait", "3s", "--visibility", "5m", "-o", "json"}, conn...)...)
	cmd.Dir, cmd.Env = t.TempDir(), cmdtest.Env()
	var stdout, stderr cmdtest.LockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited, err := cmdtest.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	// The row is printed once the first receive (which holds the message)
	// has been visited; the scan then waits in its next receive.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stdout.String(), id) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("peek printed no row in 30s; stderr:\n%s", stderr.String())
		}
		select {
		case err := <-exited:
			t.Fatalf("peek exited (%v) before its signal; stderr:\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	_ = cmd.Process.Signal(syscall.SIGHUP)
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("peek still running a minute after SIGHUP; stderr:\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130 (a clean stop); stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", stderr.String())
	}
	code, out, errOut := dlqtest.DLQRun(t, append([]string{"peek", "sqs://" + dlq, "--wait", "1s", "-o", "json"}, conn...)...)
	if code != 0 || !strings.Contains(out, id) {
		t.Fatalf("peek right after the SIGHUP: exit %d, message %s not visible again (want it released at once); stdout:\n%s\nstderr:\n%s", code, id, out, errOut)
	}
}

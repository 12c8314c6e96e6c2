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
	cmd, exited, _, stderr := startHoldingPeek(t, "brighter", dlq, id, conn)
	var err error
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

// TestDLQPeek_SIGHUPIgnoredUnderNohup: started with SIGHUP ignored (nohup),
// `brighter dlq peek` keeps it ignored: a SIGHUP neither stops nor kills it,
// and a SIGTERM after it still stops it cleanly (exit 130).
func TestDLQPeek_SIGHUPIgnoredUnderNohup(t *testing.T) {
	t.Parallel()
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Fatalf("nohup (coreutils) is not on PATH: %v", err)
	}
	run, p, conn := dlqtest.FauxqsQueues(t, "nohup", "dlq")
	dlq := "dlq-" + run
	id := "nohup-" + run
	if err := p.Send(t.Context(), dlqtest.Stamped(id, "orders", dlq)); err != nil {
		t.Fatal(err)
	}
	cmd, exited, _, stderr := startHoldingPeek(t, nohup, dlq, id, conn)
	_ = cmd.Process.Signal(syscall.SIGHUP)
	select {
	case err := <-exited:
		t.Fatalf("under nohup a SIGHUP ended peek (%v); stderr:\n%s", err, stderr.String())
	case <-time.After(500 * time.Millisecond):
	}
	if strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("under nohup a SIGHUP was taken as a stop; stderr:\n%s", stderr.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("peek still running a minute after SIGTERM; stderr:\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v after SIGTERM, want 130; stderr:\n%s", err, stderr.String())
	}
}

// startHoldingPeek starts `brighter dlq peek` of the SQS queue dlq (through
// launcher: "brighter", or nohup, which execs it in the same process) and
// returns once it has printed the message id, which its scan then holds
// (--visibility 5m) while it waits in its next receive (--wait 3s).
func startHoldingPeek(t *testing.T, launcher, dlq, id string, conn []string) (*exec.Cmd, <-chan error, *cmdtest.LockedBuffer, *cmdtest.LockedBuffer) {
	t.Helper()
	args := append([]string{"dlq", "peek", "sqs://" + dlq, "--wait", "3s", "--visibility", "5m", "-o", "json"}, conn...)
	if launcher != "brighter" {
		args = append([]string{"brighter"}, args...)
	}
	cmd := exec.Command(launcher, args...)
	cmd.Dir, cmd.Env = t.TempDir(), cmdtest.Env()
	var stdout, stderr cmdtest.LockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited, err := cmdtest.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
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
	return cmd, exited, &stdout, &stderr
}

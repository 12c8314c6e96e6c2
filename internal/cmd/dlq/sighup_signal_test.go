package dlq_test

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQPeek_SIGHUPStopsAsSIGTERM: a SIGHUP (the terminal closed, an ssh
// session dropped) sent to `brighter dlq peek` on an SQS queue (fauxqs)
// while its scan holds a message stops it cleanly as SIGTERM does: exit
// 130, and the message it held is visible again at once (not after
// --visibility), so a second peek right after reads it.
func TestDLQPeek_SIGHUPStopsAsSIGTERM(t *testing.T) {
	t.Parallel()
	dlq, id, conn := dlqtest.OneDeadLetter(t, "hup")
	p := dlqtest.StartPeek(t, "brighter", dlq, id, conn, holdingPeek...)
	p.Signal(syscall.SIGHUP)
	if code, _ := p.Wait(t); code != 130 {
		t.Fatalf("exit %d, want 130 (a clean stop); stderr:\n%s", code, p.Stderr.String())
	}
	if !strings.Contains(p.Stderr.String(), "interrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", p.Stderr.String())
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
	dlq, id, conn := dlqtest.OneDeadLetter(t, "nohup")
	p := dlqtest.StartPeek(t, nohup, dlq, id, conn, holdingPeek...)
	p.Signal(syscall.SIGHUP)
	if code, exited := p.ExitedWithin(500 * time.Millisecond); exited {
		t.Fatalf("under nohup a SIGHUP ended peek (exit %d); stderr:\n%s", code, p.Stderr.String())
	}
	if strings.Contains(p.Stderr.String(), "interrupted") {
		t.Fatalf("under nohup a SIGHUP was taken as a stop; stderr:\n%s", p.Stderr.String())
	}
	p.Signal(syscall.SIGTERM)
	if code, _ := p.Wait(t); code != 130 {
		t.Fatalf("exit %d after SIGTERM, want 130; stderr:\n%s", code, p.Stderr.String())
	}
}

// holdingPeek are the flags of the peek the SIGHUP tests signal
// (dlqtest.StartPeek): once it has printed the message, its scan holds it
// (--visibility 5m) while it waits in its next receive (--wait 3s).
var holdingPeek = []string{"--wait", "3s", "--visibility", "5m"}

package edit

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/polltest"
)

// TestDLQEdit_SignalStopsTheEditor: against fauxqs, a SIGTERM to `dlq
// edit` while $EDITOR (a script that sleeps 20 s) is open stops the editor
// and exits 130 within a few seconds, saying so, with nothing sent: the
// destination stays empty and the message is in the DLQ, visible. Before,
// the signal waited for the editor to exit 20 s later.
func TestDLQEdit_SignalStopsTheEditor(t *testing.T) {
	t.Parallel()
	dlq, dest, conn := dlqtest.CrashQueue(t, 1)
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	editor := filepath.Join(dir, "sleep20.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\ntouch '"+started+"'\nsleep 20\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := dlqtest.CrashCmd(t, append([]string{"dlq", "edit", "c0", "sqs://" + dlq, "--to", dest}, conn...)...)
	cmd.Env = append(cmd.Env, "EDITOR="+editor)
	p := cmdtest.Start(t, cmd)
	polltest.Until(t, 30*time.Second, "the editor to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	signalled := time.Now()
	p.Signal(syscall.SIGTERM)
	code, exited := p.ExitedWithin(15 * time.Second)
	if !exited {
		t.Fatalf("dlq edit still runs 15 s after SIGTERM with its editor open; stderr:\n%s", p.Stderr.String())
	}
	took := time.Since(signalled)
	if errOut := p.Stderr.String(); code != cmdutil.ExitInterrupted || !strings.Contains(errOut, shared.LogDLQEditorStopping) ||
		!strings.Contains(errOut, "nothing was sent") {
		t.Fatalf("dlq edit after SIGTERM with its editor open: exit %d, want exit %d saying the editor was stopped and nothing sent\n%s", code, cmdutil.ExitInterrupted, errOut)
	}
	if took > 5*time.Second {
		t.Errorf("dlq edit took %s to exit after SIGTERM with its editor open, want well under 5s", took)
	}
	if got := dlqtest.CrashDestIDs(t, dest, conn); len(got) != 0 {
		t.Errorf("an interrupted edit reached %s: %v", dest, got)
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); left["c0"] != 1 {
		t.Errorf("the DLQ holds %v after the interrupted edit, want c0, visible", left)
	}
}

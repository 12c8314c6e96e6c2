package demo_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// TestDemo_SignalStopsTheStoryAndRemovesItsFile starts `brighter demo` as
// a process on its embedded emulator. SIGTERM during the story stops its
// pump and emulator: a `brighter: ...` line says it was interrupted, exit
// 130, at once. With --keep-running, Ctrl-C (SIGINT) after the story is
// the demo's documented end: exit 0, and the subscriptions file it wrote
// in the temporary directory, which names the emulator that has just
// stopped, is gone.
func TestDemo_SignalStopsTheStoryAndRemovesItsFile(t *testing.T) {
	t.Run("during the story", func(t *testing.T) {
		p := cmdtest.StartBrighter(t, t.TempDir(), nil, "demo")
		p.AwaitStdout(t, "2. The message pump reads")
		p.Signal(syscall.SIGTERM)
		code, took := p.Wait(t)
		stderr := p.Stderr.String()
		if code != 130 {
			t.Fatalf("exit %d, want 130; stdout:\n%s\nstderr:\n%s", code, p.Stdout.String(), stderr)
		}
		if took > 5*time.Second {
			t.Errorf("exited %v after the signal, want at once", took)
		}
		if !strings.Contains(stderr, "brighter: demo: interrupted; the story was stopped and its emulator shut down") {
			t.Errorf("no final line saying the demo was interrupted; stderr:\n%s", stderr)
		}
		if strings.Contains(p.Stdout.String(), "Done") {
			t.Errorf("the story went on after the signal; stdout:\n%s", p.Stdout.String())
		}
	})
	t.Run("keep running", func(t *testing.T) {
		tmp := t.TempDir()
		p := cmdtest.StartBrighter(t, t.TempDir(), []string{"TMPDIR=" + tmp}, "demo", "--keep-running")
		p.AwaitStdout(t, "Press Ctrl-C to stop the emulator")
		written, err := filepath.Glob(filepath.Join(tmp, "brighter-demo-*.yaml"))
		if err != nil || len(written) != 1 {
			t.Fatalf("the demo wrote %v in its temporary directory (%v), want one subscriptions file", written, err)
		}
		p.Signal(syscall.SIGINT)
		code, _ := p.Wait(t)
		if code != 0 {
			t.Fatalf("exit %d, want 0 (Ctrl-C is how a --keep-running demo ends); stderr:\n%s", code, p.Stderr.String())
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "brighter-demo-*.yaml")); len(left) != 0 {
			t.Errorf("the demo left %v behind, naming an emulator that has stopped", left)
		}
		if !strings.Contains(p.Stderr.String(), "signal received; stopping the demo and its emulator") {
			t.Errorf("the signal is not logged; stderr:\n%s", p.Stderr.String())
		}
	})
}

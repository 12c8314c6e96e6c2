//go:build unix

package shared

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/polltest"
)

// TestRunStoppable_GroupOutlivingItsShellIsKilled: an editor run by sh -c
// off a terminal (a process group of its own) that ignores SIGTERM, as
// its child does: the stop's SIGTERM ends the sh at once, and what ignores
// it is killed (SIGKILL to the group) once EditorStopGrace has passed.
// RunStoppable returns only when no process of the group is alive
// (bounded). Before,
// it returned as soon as the sh exited and the rest ran on.
func TestRunStoppable_GroupOutlivingItsShellIsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	script := filepath.Join(dir, "ed2.sh")
	body := "#!/bin/sh\ntrap '' TERM INT HUP\necho '{}' > \"$1\"\n(trap '' TERM INT HUP; sleep 201) &\necho $$ > '" + pidFile + "'\nsleep 201\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	// As EditSession.Commands runs an EDITOR with shell characters.
	c := exec.Command("sh", "-c", script+` "$1"`, "sh", filepath.Join(dir, "body.json"))
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- RunStoppable(ctx, c, true) }()
	var pid int
	polltest.Until(t, 10*time.Second, "the editor to start", func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	if pgid == syscall.Getpgrp() {
		t.Fatalf("the editor runs in the test's process group %d, want one of its own", pgid)
	}
	stopped := time.Now()
	stop()
	select {
	case err = <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("RunStoppable still runs 10 s after its stop")
	}
	if err != context.Canceled {
		t.Errorf("RunStoppable after its stop: %v, want %v", err, context.Canceled)
	}
	took := time.Since(stopped)
	t.Logf("RunStoppable returned %s after its stop", took)
	if took < EditorStopGrace {
		t.Errorf("RunStoppable returned %s after its stop, before the grace of %s for what ignores SIGTERM", took, EditorStopGrace)
	}
	// What was killed may stay a zombie until its new parent (PID 1)
	// reaps it: allow for that, not for a live process (sleep 201).
	polltest.Until(t, 5*time.Second, "the editor's process group to be gone", func() bool { return syscall.Kill(-pgid, 0) != nil })
}

// TestEditSession_BareEditorRunsDirectlyOthersThroughSh: an EDITOR that names a
// program alone is run itself with the file as its argument (no sh between: a
// terminal's ctrl+c reaches only it and brighter); one with arguments or other
// shell characters is run by sh -c with the file as "$1".
func TestEditSession_BareEditorRunsDirectlyOthersThroughSh(t *testing.T) {
	s := &EditSession{BodyPath: "/tmp/x/body.json"}
	for _, tc := range []struct {
		editor string
		want   []string
	}{
		{"vi", []string{"vi", "/tmp/x/body.json"}},
		{"/usr/local/bin/my-editor_2.0", []string{"/usr/local/bin/my-editor_2.0", "/tmp/x/body.json"}},
		{"code --wait", []string{"sh", "-c", `code --wait "$1"`, "sh", "/tmp/x/body.json"}},
		{"vi -c 'set ft=json'", []string{"sh", "-c", `vi -c 'set ft=json' "$1"`, "sh", "/tmp/x/body.json"}},
		{"$HOME/ed", []string{"sh", "-c", `$HOME/ed "$1"`, "sh", "/tmp/x/body.json"}},
		{"~/ed", []string{"sh", "-c", `~/ed "$1"`, "sh", "/tmp/x/body.json"}},
	} {
		cs := s.Commands(tc.editor)
		if len(cs) != 1 || strings.Join(cs[0].Args, "\x00") != strings.Join(tc.want, "\x00") {
			var got [][]string
			for _, c := range cs {
				got = append(got, c.Args)
			}
			t.Errorf("Commands(%q) run %q, want %q", tc.editor, got, tc.want)
		}
	}
}

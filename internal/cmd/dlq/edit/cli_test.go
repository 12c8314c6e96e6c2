package edit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest/cmdmain"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
)

// TestDLQEdit_DefaultEditorNeedsATerminal: off a terminal with no
// $EDITOR, an edit that would open vi is refused at once (exit 2, saying
// what to give instead) and nothing is read; --body-file needs no editor.
func TestDLQEdit_DefaultEditorNeedsATerminal(t *testing.T) {
	t.Parallel()
	path := cmdtest.WriteMemoryDLQ(t, 1)
	for _, args := range [][]string{{}, {"--body-file", "-", "--headers"}} {
		io, out, errOut := cmdtest.FakeIO(`{"fixed":true}`, false)
		code := cmdmain.Run(context.Background(), io, append([]string{"dlq", "edit", "p0", "memory://orders-dlq?file=" + path, "--to", "orders"}, args...))
		if code != cmdutil.ExitUsage || !strings.Contains(errOut.String(), "stdin is not a terminal: give the new body with --body-file") {
			t.Errorf("edit %v off a terminal without $EDITOR: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, cmdutil.ExitUsage, out, errOut)
		}
	}
	io, out, errOut := cmdtest.FakeIO(`{"fixed":true}`, false)
	if code := cmdmain.Run(context.Background(), io, []string{"dlq", "edit", "p0", "memory://orders-dlq?file=" + path, "--to", "orders", "--body-file", "-"}); code != cmdutil.ExitOK {
		t.Errorf("edit --body-file - off a terminal: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitOK, out, errOut)
	}
}

// TestDLQEdit_InvalidJSONOnATerminalReopens: on a terminal an
// edited body that is not valid JSON is refused with its reason and the
// editor opened again on "y" (the second edit is replayed); "n" abandons
// the edit with exit 2 and the message stays in the DLQ (fauxqs).
func TestDLQEdit_InvalidJSONOnATerminalReopens(t *testing.T) {
	dlq, dest, conn := dlqtest.CrashQueue(t, 2)
	dir := t.TempDir()
	script := filepath.Join(dir, "editor.sh")
	// The first run writes broken JSON, every later one a valid body.
	body := "#!/bin/sh\nif [ -e " + dir + "/ran ]; then printf '{\"ok\":true}' > \"$1\"; else touch " + dir + "/ran; printf '{\"ok\":' > \"$1\"; fi\necho run >> " + dir + "/runs\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", script)
	edit := func(id, answer string) (string, error) {
		var out, errOut strings.Builder
		root := cmdmain.NewRootCmd(&iostreams.IOStreams{In: strings.NewReader(answer), Out: &out, ErrOut: &errOut, InTTY: true, Getenv: os.LookupEnv})
		root.SetArgs(append([]string{"dlq", "edit", id, "sqs://" + dlq, "--to", dest}, conn...))
		err := root.ExecuteContext(context.Background())
		return out.String() + errOut.String(), err
	}

	out, err := edit("c0", "y\n")
	if err != nil {
		t.Fatalf("edit with a second try: %v\n%s", err, out)
	}
	if !strings.Contains(out, "the body is not valid JSON") || !strings.Contains(out, "Edit again? [Y/n]") || !strings.Contains(out, "replayed c0 -> "+dest) {
		t.Errorf("output:\n%s", out)
	}
	if runs, _ := os.ReadFile(filepath.Join(dir, "runs")); strings.Count(string(runs), "run") != 2 {
		t.Errorf("the editor ran %d times, want 2", strings.Count(string(runs), "run"))
	}
	_ = os.Remove(filepath.Join(dir, "ran"))
	out, err = edit("c1", "n\n")
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdutil.ExitUsage || !strings.Contains(out, "nothing was sent") && !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("edit abandoned: %v, want exit %d saying nothing was sent\n%s", err, cmdutil.ExitUsage, out)
	}
	left := dlqtest.CrashPeekIDs(t, dlq, conn, 0, nil)
	if left["c1"] != 1 || left["c0"] != 0 {
		t.Errorf("the DLQ holds %v, want c1 only", left)
	}
}

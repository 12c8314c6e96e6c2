package replay

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQReplay_JournalLineCutByACrashIsReportedAndTheRunResumes: a
// replay whose journal ends in a line a crash cut mid-write (no newline)
// says so on stderr, resumes from the records before it (a copy recorded
// sent is removed without being published again) and replays the rest.
func TestDLQReplay_JournalLineCutByACrashIsReportedAndTheRunResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "jc", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	done := dlqtest.Stamped("done-"+run, dest, dlq)
	todo := dlqtest.Stamped("todo-"+run, dest, dlq)
	for _, m := range []*message.Message{done, todo} {
		if err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	journal := filepath.Join(dir, "replay.journal")
	rid := inspect.ReplayID(done, "sqs://"+dlq)
	cutRID := inspect.ReplayID(todo, "sqs://"+dlq)
	if err := os.WriteFile(journal, []byte("sending "+rid+"\nsent "+rid+"\nsending "+cutRID[:7]), 0o600); err != nil {
		t.Fatal(err)
	}
	replay := append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--yes", "--journal", journal}, conn...)
	code, out, errOut := cmdtest.BrighterExit(t, dir, replay...)
	if code != cmdutil.ExitOK || !strings.Contains(errOut, inspect.LogJournalCut) || !strings.Contains(errOut, cutRID[:7]) ||
		!strings.Contains(out, "replayed done-"+run+" -> "+dest+" (sent by an earlier run; removed now)") || !strings.Contains(out, "replayed todo-"+run+" -> "+dest+"\n") {
		t.Fatalf("replay with a journal cut by a crash: exit %d, want 0, the cut line reported and the run resumed\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if ids := cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "sqs://" + dest, "-o", "json"}, conn...)...); len(ids) != 1 || ids[0] != "todo-"+run {
		t.Errorf("the destination holds %v, want only todo-%s (done-%s was sent by the earlier run)", ids, run, run)
	}
}

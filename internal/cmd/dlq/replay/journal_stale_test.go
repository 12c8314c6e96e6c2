package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// journalRun runs `brighter args` with fauxqs's credentials and
// XDG_STATE_HOME=state (the default replay journal's directory), returning
// its exit code and combined output.
func journalRun(t *testing.T, state string, args ...string) (int, string) {
	t.Helper()
	cmd := dlqtest.CrashCmd(t, args...)
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+state)
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// defaultJournals lists the journals under state's replay directory.
func defaultJournals(t *testing.T, state string) []string {
	t.Helper()
	js, err := filepath.Glob(filepath.Join(state, "brighter", "replay", "*.journal"))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestDLQReplay_JournalNotKeptByFailedPublish: a replay whose
// publishes fail (its --to queue does not exist) keeps the default journal
// and says so on stderr with its path and why; a clean run afterwards (the
// messages replayed to a queue that exists) deletes it; and a journal kept
// so is deleted too by a clean run once its messages have left the DLQ
// another way (archived): an entry for a message no longer in the DLQ does
// not keep it (fauxqs).
func TestDLQReplay_JournalNotKeptByFailedPublish(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		between func(t *testing.T, dlq string, conn []string)
		clean   func(dlq, dest string, conn []string) []string
	}{
		{name: "replayed", clean: func(dlq, dest string, conn []string) []string {
			return append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--yes"}, conn...)
		}},
		{name: "archived", between: func(t *testing.T, dlq string, conn []string) {
			file := filepath.Join(t.TempDir(), "a.jsonl")
			if out, err := dlqtest.CrashCmd(t, append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", file}, conn...)...).CombinedOutput(); err != nil {
				t.Fatalf("archive: %v\n%s", err, out)
			}
		}, clean: func(dlq, dest string, conn []string) []string {
			return append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--yes", "--wait", "1s"}, conn...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dlq, dest, conn := dlqtest.CrashQueue(t, 2)
			state := t.TempDir()
			code, out := journalRun(t, state, append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest + "-missing", "--yes"}, conn...)...)
			if code != cmdutil.ExitFailure {
				t.Fatalf("replay to a missing queue: exit %d, want %d\n%s", code, cmdutil.ExitFailure, out)
			}
			js := defaultJournals(t, state)
			if len(js) != 1 || !strings.Contains(out, "journal "+js[0]+" kept") {
				t.Fatalf("after the failed publishes: journals %v, want one, named on stderr as kept\n%s", js, out)
			}
			if tc.between != nil {
				tc.between(t, dlq, conn)
			}
			code, out = journalRun(t, state, tc.clean(dlq, dest, conn)...)
			if code != cmdutil.ExitOK {
				t.Fatalf("clean run: exit %d\n%s", code, out)
			}
			if js := defaultJournals(t, state); len(js) != 0 {
				data, _ := os.ReadFile(js[0])
				t.Errorf("a clean run left the journal %v:\n%s\nrun output:\n%s", js, data, out)
			}
		})
	}
}

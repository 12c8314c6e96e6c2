package restore

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
)

// TestDLQRestore_RefusesIDsAlreadyThere: a restore whose file holds an id
// the dead-letter queue already holds is refused (exit 2) naming the id,
// publishing nothing; --dry-run lists what would happen and publishes
// nothing; --yes restores all the same, and stats and peek then count
// every copy, the duplicate too, and the retry history records the
// restores of the run that published (fauxqs).
func TestDLQRestore_RefusesIDsAlreadyThere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "rc", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	if err := p.Send(ctx, dlqtest.Stamped("a-"+run, dest, dlq)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	archive := filepath.Join(dir, "a.jsonl")
	lines := `{"id":"a-` + run + `","topic":"` + dest + `","body":"{}"}` + "\n" + `{"id":"b-` + run + `","topic":"` + dest + `","body":"{}"}` + "\n"
	if err := os.WriteFile(archive, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	restore := append([]string{"dlq", "restore", archive, "-s", "sqs://" + dlq}, conn...)
	inDLQ := func() []string {
		return cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "sqs://" + dlq, "-o", "json"}, conn...)...)
	}

	code, out, errOut := cmdtest.BrighterExit(t, dir, append(restore, "--dry-run")...)
	if code != cmdutil.ExitOK || !strings.Contains(out, "would restore a-"+run+" -> "+dlq+" (already there: 1 copy)") || !strings.Contains(out, "would restore b-"+run+" -> "+dlq+"\n") {
		t.Fatalf("restore --dry-run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if ids := inDLQ(); len(ids) != 1 {
		t.Fatalf("after --dry-run the queue holds %v, want only a-%s", ids, run)
	}
	code, out, errOut = cmdtest.BrighterExit(t, dir, restore...)
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "already holds 1 id") || !strings.Contains(errOut, "a-"+run) || !strings.Contains(errOut, "--yes") {
		t.Fatalf("restore of an id already there: exit %d, want %d naming it\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	if ids := inDLQ(); len(ids) != 1 {
		t.Fatalf("after the refusal the queue holds %v, want only a-%s (nothing published)", ids, run)
	}
	if code, out, errOut := cmdtest.BrighterExit(t, dir, append(restore, "--yes")...); code != cmdutil.ExitOK || !strings.Contains(out, "restored 2, skipped 0, failed 0") {
		t.Fatalf("restore --yes: exit %d\n%s%s", code, out, errOut)
	}
	if ids := inDLQ(); !dlqtest.SameIDs(ids, "a-"+run, "a-"+run, "b-"+run) {
		t.Fatalf("after restore --yes the queue shows %v, want a twice and b", ids)
	}
	// The retry history (the tests' shared state directory, cmdtest.Env)
	// holds the two records the --yes run published, as restores from the
	// archive file into the DLQ; the dry run and the refusal recorded
	// nothing.
	history := filepath.Join(cmdtest.StateDir(), "brighter", "replay", "retries.jsonl")
	rs, err := inspect.ReadRetryHistory(history, func(r inspect.Retry) bool { return strings.HasSuffix(r.ID, "-"+run) })
	if err != nil || len(rs) != 2 {
		t.Fatalf("retry history %s: %+v (%v), want the 2 restores of the --yes run", history, rs, err)
	}
	for _, r := range rs {
		if !r.IsRestore() || r.From != archive || r.To != dlq || r.At.IsZero() {
			t.Errorf("history record %+v, want a restore from %s to %s", r, archive, dlq)
		}
	}
	if code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "stats", "sqs://" + dlq}, conn...)...); code != cmdutil.ExitOK || !strings.Contains(errOut, "3 counted, 3 read") {
		t.Fatalf("stats after the duplicate restore: exit %d, want 3 counted\n%s%s", code, out, errOut)
	}
}

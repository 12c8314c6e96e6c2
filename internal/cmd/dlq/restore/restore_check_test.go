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
)

// TestDLQRestore_RefusesIDsAlreadyThere: a restore whose file holds an id
// the dead-letter queue already holds is refused (exit 2) naming the id,
// publishing nothing; --dry-run lists what would happen and publishes
// nothing; --yes restores all the same, and stats and peek then count
// every copy, the duplicate too (fauxqs).
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
	if code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "stats", "sqs://" + dlq}, conn...)...); code != cmdutil.ExitOK || !strings.Contains(errOut, "3 counted, 3 read") {
		t.Fatalf("stats after the duplicate restore: exit %d, want 3 counted\n%s%s", code, out, errOut)
	}
}

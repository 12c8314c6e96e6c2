package peek

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQ_HeldByAnotherReaderIsSaid: messages another reader holds
// invisible (a killed replay or archive) cannot be read, so peek, stats,
// replay and archive each say how many were held when they began, rather
// than let a short or empty result pass for the whole dead-letter queue;
// with nothing held they say nothing of it (fauxqs; the other reader is a
// receive with a 60 s visibility timeout).
func TestDLQ_HeldByAnotherReaderIsSaid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "hd", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	dir := t.TempDir()
	const note = "held invisible by another reader when this one began"
	peek := append([]string{"dlq", "peek", "sqs://" + dlq, "--wait", "1s"}, conn...)
	if code, out, errOut := cmdtest.BrighterExit(t, dir, peek...); code != cmdutil.ExitOK || strings.Contains(errOut, note) {
		t.Fatalf("peek of an empty queue nobody holds: exit %d, want %d and no held notice\n%s%s", code, cmdutil.ExitOK, out, errOut)
	}
	for i := range 3 {
		if err := p.Send(ctx, dlqtest.Stamped(fmt.Sprintf("h%d-%s", i, run), dest, dlq)); err != nil {
			t.Fatal(err)
		}
	}
	dlqtest.HoldMessages(t, dlq, 2, 60*time.Second)
	want := "sqs://" + dlq + ": 2 more messages " + note
	for _, args := range [][]string{
		peek,
		append([]string{"dlq", "stats", "sqs://" + dlq, "--wait", "1s", "-o", "json"}, conn...),
		append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", filepath.Join(dir, "a.jsonl"), "--wait", "1s"}, conn...),
		append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--wait", "1s"}, conn...), // nothing left to confirm
	} {
		code, out, errOut := cmdtest.BrighterExit(t, dir, args...)
		if code != cmdutil.ExitOK || !strings.Contains(errOut, want) {
			t.Errorf("brighter %s: exit %d, want %d and %q on stderr\nstdout:\n%s\nstderr:\n%s", strings.Join(args[:2], " "), code, cmdutil.ExitOK, want, out, errOut)
		}
	}
}

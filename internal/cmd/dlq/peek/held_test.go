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
	want := "sqs://" + dlq + ": about 2 more messages " + note
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

// TestDLQ_HeldNoteIsAnEstimate: the held notice is the broker's estimate
// and says so. fauxqs keeps counting a hold whose visibility timeout has
// lapsed until the queue's next receive, so a peek begun after another
// reader's 1 s hold lapsed reads every message and may still be told 2
// were held; whenever a notice is given it must say "about" and that the
// figure may count lapsed holds, never claim the messages were not read.
func TestDLQ_HeldNoteIsAnEstimate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "he", "dlq")
	dlq := "dlq-" + run
	dir := t.TempDir()
	for i := range 3 {
		if err := p.Send(ctx, dlqtest.Stamped(fmt.Sprintf("e%d-%s", i, run), "t", dlq)); err != nil {
			t.Fatal(err)
		}
	}
	const hold = time.Second
	dlqtest.HoldMessages(t, dlq, 2, hold)
	// The hold lapsing is the state under test, and a fixed wait is the
	// only way to reach it: nothing but a receive can see that a hold has
	// lapsed (fauxqs still counts it as held), and a receive would end the
	// state. The hold began before HoldMessages returned; the quarter
	// second is margin for the emulator's clock.
	time.Sleep(hold + 250*time.Millisecond)
	code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "peek", "sqs://" + dlq, "--wait", "1s"}, conn...)...)
	if code != cmdutil.ExitOK || !strings.Contains(errOut, "3 shown, 3 read") {
		t.Fatalf("peek after the hold lapsed: exit %d, want %d and all 3 read\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitOK, out, errOut)
	}
	if strings.Contains(errOut, "held invisible") && (!strings.Contains(errOut, ": about 2 more messages held invisible") || !strings.Contains(errOut, "may still count holds that had lapsed") || !strings.Contains(errOut, "those still held were not read")) {
		t.Fatalf("a held notice for holds that had lapsed (all 3 read) must say it is an estimate:\n%s", errOut)
	}
}

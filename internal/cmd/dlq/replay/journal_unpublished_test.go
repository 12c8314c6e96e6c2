package replay_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest/cmdmain"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestDLQReplay_JournalKeptSaysNothingWasSentForUnpublishedFailures: a
// message that names no destination (no originalTopic, no --to) fails
// before any publish; the kept journal's notice says nothing of it was
// sent, not that a failed publish may have reached its destination.
func TestDLQReplay_JournalKeptSaysNothingWasSentForUnpublishedFailures(t *testing.T) {
	t.Parallel() // in process, on a memory DLQ file of its own
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	rec := `{"id":"n1","topic":"orders-dlq","messageType":"MT_COMMAND","handledCount":3,"bag":{"originalMessageType":"MT_COMMAND","rejectionReason":"DeliveryError","rejectionMessage":"budget exhausted","rejectionTimestamp":"2026-01-01T00:00:00Z"},"body":"{}"}` + "\n"
	if err := os.WriteFile(path, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	io, out, errOut := cmdtest.FakeIO("", false)
	code := cmdmain.Run(context.Background(), io, []string{"dlq", "replay", "memory://orders-dlq?file=" + path, "--yes", "--allow-any-destination", "--journal", filepath.Join(dir, "replay.journal")})
	if code != cmdutil.ExitFailure || !strings.Contains(out.String(), "no destination") {
		t.Fatalf("exit %d, want %d and the no-destination failure\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitFailure, out, errOut)
	}
	if !strings.Contains(errOut.String(), "kept: 1 message failed before any publish (nothing of them was sent") {
		t.Errorf("the kept journal's notice does not say nothing was sent:\n%s", errOut)
	}
	if strings.Contains(errOut.String(), "may still have reached its destination") {
		t.Errorf("the kept journal's notice says a publish may have reached its destination:\n%s", errOut)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDLQEdit_SetRefusesRejectionAndNonStringHeaders_Issue30: dlq edit
// --set refuses (exit 2, before anything is read) the rejection metadata a
// replay strips and the header fields that are not strings, naming the flag
// that sets them (--keep-count, --new-id, --to), instead of putting them in
// the bag; the message stays in the DLQ (fauxqs).
func TestDLQEdit_SetRefusesRejectionAndNonStringHeaders_Issue30(t *testing.T) {
	t.Parallel()
	dlq, dest, conn := crashQueue(t, 1)
	for _, tc := range []struct{ set, want string }{
		{"rejectionReason=X", "rejection metadata"},
		{"originalTopic=elsewhere", "rejection metadata"},
		{"RejectionReason=X", "rejection metadata"},
		{"handledCount=abc", "--keep-count"},
		{"id=x", "--new-id"},
		{"topic=x", "--to"},
		{"delayMs=5", "without a delay"},
		{"timestamp=2026-01-01T00:00:00Z", "timestamp"},
		{"replayedAt=now", "written by the replay itself"},
	} {
		cmd := crashCmd(t, append([]string{"dlq", "edit", "c0", "sqs://" + dlq, "--to", dest, "--body-file", "/dev/null", "--set", "fixedBy=ops", "--set", tc.set}, conn...)...)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(out), "cannot be set with --set") || !strings.Contains(string(out), tc.want) {
			t.Errorf("--set %s: exit %d, want %d saying it cannot be set (%s)\n%s", tc.set, code, exitUsage, tc.want, out)
		}
	}
	if left := crashDestIDs(t, dlq, conn); left["c0"] != 1 {
		t.Errorf("the DLQ holds %v after the refusals, want c0", left)
	}
	if got := crashDestIDs(t, dest, conn); len(got) != 0 {
		t.Errorf("a refused edit reached %s: %v", dest, got)
	}
}

// TestDLQEdit_SummarySpeaksOfTheOneMessage_Issue30: dlq edit's summary is
// about the message it edits ("edit ID: found and replayed"), not a scan's
// counts: no "skipped N" for the messages it read before finding it, and
// a dry run says it would be replayed (fauxqs).
func TestDLQEdit_SummarySpeaksOfTheOneMessage_Issue30(t *testing.T) {
	t.Parallel()
	dlq, dest, conn := crashQueue(t, 6)
	body := filepath.Join(t.TempDir(), "fixed.json")
	if err := os.WriteFile(body, []byte(`{"fixed":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	edit := func(more ...string) string {
		cmd := crashCmd(t, append(append([]string{"dlq", "edit", "c4", "sqs://" + dlq, "--to", dest, "--body-file", body, "--set", "fixedBy=ops"}, more...), conn...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("edit %v: %v\n%s", more, err, out)
		}
		return string(out)
	}
	if out := edit("--dry-run"); !strings.Contains(out, "edit c4: found; would be replayed (dry run, nothing changed)\n") || strings.Contains(out, "skipped") {
		t.Errorf("dry run output:\n%s", out)
	}
	if out := edit(); !strings.Contains(out, "edit c4: found and replayed\n") || strings.Contains(out, "skipped") {
		t.Errorf("edit output:\n%s", out)
	}
	if got := crashDestIDs(t, dest, conn); got["c4"] != 1 {
		t.Errorf("%s holds %v, want c4", dest, got)
	}
}

package edit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQEdit_SetRefusesRejectionAndNonStringHeaders: dlq edit
// --set refuses (exit 2, before anything is read) the rejection metadata a
// replay strips and the header fields that are not strings, naming the flag
// that sets them (--keep-count, --new-id, --to), instead of putting them in
// the bag; the message stays in the DLQ (fauxqs).
func TestDLQEdit_SetRefusesRejectionAndNonStringHeaders(t *testing.T) {
	t.Parallel()
	dlq, dest, conn := dlqtest.CrashQueue(t, 1)
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
		cmd := dlqtest.CrashCmd(t, append([]string{"dlq", "edit", "c0", "sqs://" + dlq, "--to", dest, "--body-file", "/dev/null", "--set", "fixedBy=ops", "--set", tc.set}, conn...)...)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != cmdutil.ExitUsage || !strings.Contains(string(out), "cannot be set with --set") || !strings.Contains(string(out), tc.want) {
			t.Errorf("--set %s: exit %d, want %d saying it cannot be set (%s)\n%s", tc.set, code, cmdutil.ExitUsage, tc.want, out)
		}
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); left["c0"] != 1 {
		t.Errorf("the DLQ holds %v after the refusals, want c0", left)
	}
	if got := dlqtest.CrashDestIDs(t, dest, conn); len(got) != 0 {
		t.Errorf("a refused edit reached %s: %v", dest, got)
	}
}

// TestDLQEdit_SummarySpeaksOfTheOneMessage: dlq edit's summary is
// about the message it edits ("edit ID: found and replayed"), not a scan's
// counts: no "skipped N" for the messages it read before finding it, and
// a dry run says it would be replayed (fauxqs).
func TestDLQEdit_SummarySpeaksOfTheOneMessage(t *testing.T) {
	t.Parallel()
	dlq, dest, conn := dlqtest.CrashQueue(t, 6)
	body := filepath.Join(t.TempDir(), "fixed.json")
	if err := os.WriteFile(body, []byte(`{"fixed":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	edit := func(more ...string) string {
		cmd := dlqtest.CrashCmd(t, append(append([]string{"dlq", "edit", "c4", "sqs://" + dlq, "--to", dest, "--body-file", body, "--set", "fixedBy=ops"}, more...), conn...)...)
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
	if got := dlqtest.CrashDestIDs(t, dest, conn); got["c4"] != 1 {
		t.Errorf("%s holds %v, want c4", dest, got)
	}
}

// TestDLQEdit_HeadersYAMLRefusesRejectionAndNonStringValues: the
// headers and bag an operator edits with dlq edit --headers are checked as
// --set is: a rejection key, a key the replay writes, a header that is not
// a string field, or a value that is not a string is refused (exit 2, the
// key named, nothing sent) and the dead-lettered message is left as it was
// (fauxqs); a clean edit then goes through.
func TestDLQEdit_HeadersYAMLRefusesRejectionAndNonStringValues(t *testing.T) {
	t.Parallel()
	dlq, dest, conn := dlqtest.CrashQueue(t, 1)
	dir := t.TempDir()
	body := filepath.Join(dir, "fixed.json")
	if err := os.WriteFile(body, []byte(`{"fixed":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	editor := func(name, headers string) string {
		p := filepath.Join(dir, name)
		script := "#!/bin/sh\ncase \"$1\" in\n*.yaml) printf '%s' '" + headers + "' > \"$1\" ;;\nesac\n"
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const head = "messageType: MT_COMMAND\ncontentType: application/json\n"
	for i, tc := range []struct{ yaml, want string }{
		{head + "bag:\n  rejectionReason: fixed\n", `bag key "rejectionReason" cannot be set by an edit: it is rejection metadata`},
		{head + "bag:\n  originalTopic: elsewhere\n", `bag key "originalTopic" cannot be set by an edit: it is rejection metadata`},
		{head + "bag:\n  replayedFrom: x\n", `bag key "replayedFrom" cannot be set by an edit: it is written by the replay itself`},
		{head + "bag:\n  retries: 2\n", `bag key "retries" cannot be set by an edit with a number value`},
		{head + "bag:\n  fix: {by: ops}\n", `bag key "fix" cannot be set by an edit with a mapping value`},
		{head + "correlationId: 42\n", `header "correlationId" cannot be set by an edit with a number value`},
		{head + "rejectionMessage: gone\n", `header "rejectionMessage" cannot be set by an edit: it is rejection metadata`},
		{head + "handledCount: 0\n", `header "handledCount" cannot be set by an edit: the copy's handled count is 0; --keep-count`},
	} {
		cmd := dlqtest.CrashCmd(t, append([]string{"dlq", "edit", "c0", "sqs://" + dlq, "--to", dest, "--headers", "--body-file", body}, conn...)...)
		cmd.Env = append(cmd.Env, "EDITOR="+editor(fmt.Sprintf("e%d.sh", i), tc.yaml))
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != cmdutil.ExitUsage || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "nothing was sent") {
			t.Errorf("%q: exit %d, want %d saying %s and that nothing was sent\n%s", tc.yaml, code, cmdutil.ExitUsage, tc.want, out)
		}
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); left["c0"] != 1 {
		t.Errorf("the DLQ holds %v after the refusals, want c0", left)
	}
	if got := dlqtest.CrashDestIDs(t, dest, conn); len(got) != 0 {
		t.Errorf("a refused edit reached %s: %v", dest, got)
	}
	cmd := dlqtest.CrashCmd(t, append([]string{"dlq", "edit", "c0", "sqs://" + dlq, "--to", dest, "--headers", "--body-file", body}, conn...)...)
	cmd.Env = append(cmd.Env, "EDITOR="+editor("ok.sh", head+"bag:\n  fixedBy: ops\n"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a clean headers edit: %v\n%s", err, out)
	}
	out, err := dlqtest.CrashCmd(t, append([]string{"dlq", "peek", "sqs://" + dest, "-o", "json", "--wait", "1s"}, conn...)...).Output()
	if err != nil {
		t.Fatalf("peek %s: %v", dest, err)
	}
	if s := string(out); !strings.Contains(s, `"id":"c0"`) || !strings.Contains(s, `"fixedBy":"ops"`) || strings.Contains(s, "rejectionReason") {
		t.Errorf("%s holds, after the clean edit:\n%s", dest, s)
	}
}

// TestDLQEdit_DryRunFailsWhatTheRunWould: an edit whose body SQS
// cannot carry (binary, with a content type that is not a compressed one)
// fails its dry run (exit 1, the reason logged) as it fails the real run,
// instead of saying it would be replayed; both leave the message in the
// DLQ and send nothing (fauxqs).
func TestDLQEdit_DryRunFailsWhatTheRunWould(t *testing.T) {
	t.Parallel()
	dlq, dest, conn := dlqtest.CrashQueue(t, 1)
	body := filepath.Join(t.TempDir(), "binary")
	if err := os.WriteFile(body, []byte{0xff, 0xfe, 0x00, 0x81, 0xc3}, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		args := []string{"dlq", "edit", "c0", "sqs://" + dlq, "--to", dest, "--body-file", body, "--set", "contentType=application/octet-stream"}
		if dry {
			args = append(args, "--dry-run")
		}
		cmd := dlqtest.CrashCmd(t, append(args, conn...)...)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != cmdutil.ExitFailure || !strings.Contains(string(out), "not UTF-8 text") {
			t.Errorf("edit to a binary body (dry run %v): exit %d, want %d naming the body SQS cannot carry\n%s", dry, code, cmdutil.ExitFailure, out)
		}
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); left["c0"] != 1 {
		t.Errorf("the DLQ holds %v, want c0", left)
	}
	if got := dlqtest.CrashDestIDs(t, dest, conn); len(got) != 0 {
		t.Errorf("a failed edit reached %s: %v", dest, got)
	}
}

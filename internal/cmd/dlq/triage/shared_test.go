package triage

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// TestDLQTriage_SharedDeadLetterTopic_OpensToLook: dlq triage on a
// dead-letter topic the fan-out guard refuses to replay from opens (its
// actions are made), loads the dead letters, marks their destination
// refused, and refuses only the replay, saying --to or --fan-out; the
// dead letter stays and can be archived. Each action writes an audit
// record (--log-file's): the user, the action, the ids, the destination
// and the outcome.
func TestDLQTriage_SharedDeadLetterTopic_OpensToLook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, _, _ := dlqtest.PubSubShared(t)
	o := testOptions(file, filepath.Join(t.TempDir(), "a.jsonl"), false)
	logger, err := o.Factory.Logger()
	if err != nil {
		t.Fatal(err)
	}
	a, err := o.actions(ctx, "billing", logger)
	if err != nil {
		t.Fatalf("triage on a shared dead-letter topic did not open: %v", err)
	}
	var audit strings.Builder
	a.audit = o.auditLogger(&audit)
	ms, err := a.Load(ctx)
	if err != nil || len(ms) != 1 || ms[0].Header.MessageID != "m1" {
		t.Fatalf("load: %d messages, %v; want m1", len(ms), err)
	}
	if d := a.ReplayDestinations(ms); len(d) != 1 || !strings.Contains(d[0], "refused") {
		t.Errorf("the confirmation's destinations %v do not mark the replay refused", d)
	}
	if _, err := a.Replay(ctx, []string{"m1"}, false, func(triage.Outcome) {}); err == nil || !strings.Contains(err.Error(), "--fan-out") {
		t.Fatalf("replay from the console: %v, want refused naming --fan-out", err)
	}
	if ms, err := a.Load(ctx); err != nil || len(ms) != 1 {
		t.Fatalf("after the refused replay the dead-letter topic holds %d, %v; want m1 still", len(ms), err)
	}
	if res, err := a.Archive(ctx, []string{"m1"}, false, func(triage.Outcome) {}); err != nil || res.Done != 1 {
		t.Fatalf("archive from the console: %+v, %v; want m1 archived", res, err)
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit records:\n%s\nwant one per action (2)", audit.String())
	}
	for i, want := range []string{"action=replay ids=m1 destination=originalTopic", "action=archive ids=m1 destination=" + o.archiveFile} {
		if !strings.Contains(lines[i], `msg="`+LogAudit+`"`) || !strings.Contains(lines[i], "user=") || !strings.Contains(lines[i], want) {
			t.Errorf("audit record %d %q lacks %q", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], "error=") || !strings.Contains(lines[1], "done=1 failed=0") {
		t.Errorf("the audit records do not carry the outcomes:\n%s", audit.String())
	}
}

package edit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQEdit_SetGivesTheCopyAFreshReplayID: an edit with --set sends its
// copy under the fresh replayId a body-only edit gives it (SHA-256 of the
// source, the id and the new rejection time), never without one and never
// under the replayId an earlier replay left in the bag. A message replayed
// before and dead-lettered again, whose old replayId the journal records
// sent and not removed (a replay killed after its publish), is published,
// not taken as sent by an earlier run and dropped; a first-time dead
// letter's copy carries its replayId, and the journal lines name it (fauxqs).
func TestDLQEdit_SetGivesTheCopyAFreshReplayID(t *testing.T) {
	t.Parallel()
	q := dlqtest.NewFauxqsDLQ(t, "eri")
	dlq, dest, conn := q.DLQ, q.Dest, q.Conn
	const old = "0123456789abcdef0123456789abcdef"
	again := q.Stamped("again")
	again.Header.Bag[inspect.KeyReplayID] = old
	again.Header.Bag[message.KeyReplayedFrom] = "sqs://" + dlq
	first, plain := q.Stamped("first"), q.Stamped("plain")
	q.Send(t, again, first, plain)
	dir, body := t.TempDir(), dlqtest.FixedBody(t)
	journal := filepath.Join(dir, "edit.journal")
	now := time.Now().UnixMilli()
	if err := os.WriteFile(journal, fmt.Appendf(nil, "sending %s\nsent %s %d 300000\n", old, old, now), 0o600); err != nil {
		t.Fatal(err)
	}
	edit := func(id string, more ...string) (int, string, string) {
		args := append([]string{"dlq", "edit", id, "sqs://" + dlq, "--to", dest, "--body-file", body, "--journal", journal}, more...)
		return cmdtest.BrighterExit(t, dir, append(args, conn...)...)
	}
	for _, m := range []*message.Message{again, first} {
		id := m.Header.MessageID
		code, out, errOut := edit(id, "--set", "a=b")
		if code != cmdutil.ExitOK || !strings.Contains(out, "replayed "+id+" -> "+dest+"\n") || strings.Contains(out, "earlier run") {
			t.Fatalf("edit --set %s: exit %d, want it published\nstdout:\n%s\nstderr:\n%s", id, code, out, errOut)
		}
	}
	if code, out, errOut := edit(plain.Header.MessageID); code != cmdutil.ExitOK {
		t.Fatalf("body-only edit: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	_, peek, _ := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "peek", "sqs://" + dest, "-o", "json"}, conn...)...)
	for _, m := range []*message.Message{again, first, plain} {
		rid := inspect.ReplayID(m, "sqs://"+dlq)
		line := peekLine(peek, m.Header.MessageID)
		if !strings.Contains(line, `"replayId":"`+rid+`"`) || strings.Contains(line, old) {
			t.Errorf("the edited copy of %s does not carry its fresh replayId %s:\n%s", m.Header.MessageID, rid, peek)
		}
		if m != plain && !strings.Contains(line, `"a":"b"`) {
			t.Errorf("the edited copy of %s lacks its --set entry: %s", m.Header.MessageID, line)
		}
	}
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		if f := strings.Fields(l); len(f) < 2 || strings.HasPrefix(l, "sent  ") || strings.HasSuffix(l, " ") {
			t.Errorf("the journal holds a line without a replay id: %q\n%s", l, data)
		}
	}
	if left := q.PeekIDs(t, dir, dlq); len(left) != 0 {
		t.Errorf("the DLQ still holds %v", left)
	}
}

// TestDLQEdit_JournalLinesWithoutAReplayID: a journal holding the lines
// with an empty replay id an older edit wrote ("sending ", "sent  AT
// HOLD") does not block later runs: they name no copy, so they are passed
// over with a warning and the edit publishes its copy; a line that is none
// of a journal's forms still refuses the run (exit 2, nothing sent),
// saying what to do with it (fauxqs).
func TestDLQEdit_JournalLinesWithoutAReplayID(t *testing.T) {
	t.Parallel()
	q := dlqtest.NewFauxqsDLQ(t, "enj")
	dlq, dest := q.DLQ, q.Dest
	m := q.Stamped("m")
	q.Send(t, m)
	dir, body := t.TempDir(), dlqtest.FixedBody(t)
	journal := filepath.Join(dir, "edit.journal")
	args := append([]string{"dlq", "edit", m.Header.MessageID, "sqs://" + dlq, "--to", dest, "--body-file", body, "--set", "a=b", "--journal", journal}, q.Conn...)
	if err := os.WriteFile(journal, []byte("sending abc\ngarbage here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cmdtest.BrighterExit(t, dir, args...)
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "edit.journal:2: not a journal line") || !strings.Contains(errOut, "correct or delete that line") {
		t.Fatalf("a damaged journal: exit %d, want %d naming the line and what to do\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	if got := q.PeekIDs(t, dir, dest); len(got) != 0 {
		t.Fatalf("a refused run sent %v", got)
	}
	if err := os.WriteFile(journal, fmt.Appendf(nil, "sending \nsent  %d 300000\nremoved \n", time.Now().UnixMilli()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cmdtest.BrighterExit(t, dir, args...)
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed "+m.Header.MessageID+" -> "+dest+"\n") || !strings.Contains(errOut, "empty replay id") {
		t.Fatalf("a journal with empty replay ids: exit %d, want the copy published and a warning\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if got := q.PeekIDs(t, dir, dest); len(got) != 1 {
		t.Errorf("the destination holds %v, want the edited copy", got)
	}
}

// TestDLQEdit_SetBagKeysAreCaseSensitive: a message whose bag holds
// Tenant and tenant (send accepts both: bag keys are case-sensitive on the
// wire) edited with --set tenant=c keeps Tenant, and with --set Tenant=c
// keeps tenant: the edit sets only the key given (fauxqs).
func TestDLQEdit_SetBagKeysAreCaseSensitive(t *testing.T) {
	t.Parallel()
	q := dlqtest.NewFauxqsDLQ(t, "ecs")
	run, dlq, dest, conn := q.Run, q.DLQ, q.Dest, q.Conn
	for _, id := range []string{"lower", "upper"} {
		m := q.Stamped(id)
		m.Header.Bag["Tenant"], m.Header.Bag["tenant"] = "a", "b"
		q.Send(t, m)
	}
	dir, body := t.TempDir(), dlqtest.FixedBody(t)
	for id, set := range map[string]string{"lower-" + run: "tenant=c", "upper-" + run: "Tenant=c"} {
		args := append([]string{"dlq", "edit", id, "sqs://" + dlq, "--to", dest, "--body-file", body, "--set", set, "--journal", ""}, conn...)
		if code, out, errOut := cmdtest.BrighterExit(t, dir, args...); code != cmdutil.ExitOK {
			t.Fatalf("edit %s --set %s: exit %d\nstdout:\n%s\nstderr:\n%s", id, set, code, out, errOut)
		}
	}
	_, peek, _ := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "peek", "sqs://" + dest, "-o", "json"}, conn...)...)
	for id, want := range map[string][]string{
		"lower-" + run: {`"Tenant":"a"`, `"tenant":"c"`},
		"upper-" + run: {`"Tenant":"c"`, `"tenant":"b"`},
	} {
		line := peekLine(peek, id)
		for _, w := range want {
			if !strings.Contains(line, w) {
				t.Errorf("the edited copy of %s lacks %s: %s", id, w, line)
			}
		}
	}
}

// peekLine is the last line of peek (`dlq peek -o json`'s output) that
// holds the message id, "" when none does.
func peekLine(peek, id string) string {
	line := ""
	for l := range strings.SplitSeq(peek, "\n") {
		if strings.Contains(l, `"id":"`+id+`"`) {
			line = l
		}
	}
	return line
}

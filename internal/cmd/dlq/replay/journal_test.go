package replay

import (
	"errors"
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

// TestDLQReplay_JournalResumes: a replay whose journal records a
// message's copy as sent by an earlier run (killed between the publish and
// the remove) removes that message without publishing it again, publishes
// the others, says so, and deletes the journal once nothing is left to
// resume; a journal that is not one refuses the replay before anything moves.
func TestDLQReplay_JournalResumes(t *testing.T) {
	t.Parallel()
	q := dlqtest.NewFauxqsDLQ(t, "jr")
	run, dlq, dest, conn := q.Run, q.DLQ, q.Dest, q.Conn
	done := q.Stamped("done")
	q.Send(t, done, q.Stamped("todo"))
	dir := t.TempDir()
	journal := filepath.Join(dir, "replay.journal")
	if err := os.WriteFile(journal, []byte("not a journal\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	replay := append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--yes", "--journal", journal}, conn...)
	if code, out, errOut := cmdtest.BrighterExit(t, dir, replay...); code != cmdutil.ExitUsage || !strings.Contains(errOut, "replay.journal:1: not a journal line") {
		t.Fatalf("replay with a damaged journal: exit %d, want %d naming the line\n%s%s", code, cmdutil.ExitUsage, out, errOut)
	}
	rid := inspect.ReplayID(done, "sqs://"+dlq)
	if err := os.WriteFile(journal, []byte("sending "+rid+"\nsent "+rid+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cmdtest.BrighterExit(t, dir, replay...)
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed done-"+run+" -> "+dest+" (sent by an earlier run; removed now)") ||
		!strings.Contains(out, "replayed todo-"+run+" -> "+dest+"\n") || !strings.Contains(errOut, "resuming: the journal "+journal+" records 1 copy sent by an earlier run") {
		t.Fatalf("resumed replay: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if ids := q.PeekIDs(t, dir, dest); len(ids) != 1 || ids[0] != "todo-"+run {
		t.Errorf("the destination holds %v, want only todo-%s (done-%s was sent by the earlier run)", ids, run, run)
	}
	if ids := q.PeekIDs(t, dir, dlq); len(ids) != 0 {
		t.Errorf("the dead-letter queue still holds %v", ids)
	}
	if _, err := os.Stat(journal); !os.IsNotExist(err) {
		t.Errorf("the journal was kept after a complete replay (stat: %v)", err)
	}
}

// TestDLQReplay_JournalKeptWhileAKilledRunHolds: a replay killed
// after its publish was accepted and recorded, before it removed the
// message, leaves the message invisible for its --visibility. A clean rerun
// inside that time reads nothing (the dead-letter queue looks empty) but
// keeps the journal, saying why; the run that reads the message once the
// hold lapses only removes it: one copy at the destination, never two
// (fauxqs; the killed run is played by a receive with a 4 s visibility
// timeout, a copy sent to the destination and the journal lines it wrote).
func TestDLQReplay_JournalKeptWhileAKilledRunHolds(t *testing.T) {
	t.Parallel()
	q := dlqtest.NewFauxqsDLQ(t, "jh")
	run, dlq, dest, conn := q.Run, q.DLQ, q.Dest, q.Conn
	m := q.Stamped("held")
	q.Send(t, m)
	// Long enough that the first rerun starts inside it on a loaded
	// machine (at 4 s a loaded run started after it had lapsed, read the
	// message and removed it).
	const hold = 15 * time.Second
	// The killed run: it read the message (held for hold), published its
	// copy and recorded it sent, then died before the remove.
	dlqtest.HoldMessages(t, dlq, 1, hold)
	q.Send(t, message.New(m.Header.MessageID, dest, message.MTCommand, []byte(`{}`)))
	dir := t.TempDir()
	journal := filepath.Join(dir, "replay.journal")
	j, err := inspect.OpenJournal(journal, hold)
	if err != nil {
		t.Fatal(err)
	}
	rid := []string{inspect.ReplayID(m, "sqs://"+dlq)}
	if err := errors.Join(j.Sending(rid), j.Published(rid)); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Close(true, false); err != nil {
		t.Fatal(err)
	}
	replay := append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--yes", "--journal", journal, "--wait", "1s", "--visibility", "30s"}, conn...)
	code, out, errOut := cmdtest.BrighterExit(t, dir, replay...)
	if code != cmdutil.ExitOK || !strings.Contains(errOut, "journal "+journal+" kept: 1 copy recorded sent less than --visibility ago") {
		t.Fatalf("a clean rerun while the killed run holds the message: exit %d, want %d and the journal kept, saying why\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitOK, out, errOut)
	}
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("the journal is gone after a rerun that read nothing: %v", err)
	}
	// Once the hold lapses, a rerun reads the message and only removes it.
	deadline := time.Now().Add(hold + 30*time.Second)
	for !strings.Contains(out, "(sent by an earlier run; removed now)") {
		if time.Now().After(deadline) {
			t.Fatalf("no rerun removed the message within %s of its hold:\nstdout:\n%s\nstderr:\n%s", hold+30*time.Second, out, errOut)
		}
		if code, out, errOut = cmdtest.BrighterExit(t, dir, replay...); code != cmdutil.ExitOK {
			t.Fatalf("rerun: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	}
	if ids := q.PeekIDs(t, dir, dest); len(ids) != 1 {
		t.Errorf("the destination holds %v, want one copy of held-%s", ids, run)
	}
	if ids := q.PeekIDs(t, dir, dlq); len(ids) != 0 {
		t.Errorf("the dead-letter queue still holds %v", ids)
	}
	if _, err := os.Stat(journal); !os.IsNotExist(err) {
		t.Errorf("the journal was kept after the message was removed (stat: %v)", err)
	}
}

// TestDLQReplay_SecondRunOnALockedJournalIsRefused: while one replay holds
// a journal (played by this process opening it), a second `dlq replay` on
// the same journal is refused at once (exit 2) naming the journal and the
// holder's pid, before it reads anything: the message stays, visible, and
// the holder's journal is untouched. Once the holder closes, the replay runs.
func TestDLQReplay_SecondRunOnALockedJournalIsRefused(t *testing.T) {
	t.Parallel()
	q := dlqtest.NewFauxqsDLQ(t, "jl")
	run, dlq, dest, conn := q.Run, q.DLQ, q.Dest, q.Conn
	q.Send(t, q.Stamped("one"))
	dir := t.TempDir()
	journal := filepath.Join(dir, "replay.journal")
	holder, err := inspect.OpenJournal(journal, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Published([]string{"held-by-the-first-run"}); err != nil {
		t.Fatal(err)
	}
	replay := append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--yes", "--journal", journal}, conn...)
	code, out, errOut := cmdtest.BrighterExit(t, dir, replay...)
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, journal+" is in use by another replay") || !strings.Contains(errOut, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("a replay on a held journal: exit %d, want %d naming the journal and pid %d\n%s%s", code, cmdutil.ExitUsage, os.Getpid(), out, errOut)
	}
	if ids := q.PeekIDs(t, dir, dlq); len(ids) != 1 {
		t.Fatalf("after the refusal the dead-letter queue holds %v, want one-%s still there", ids, run)
	}
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("the holder's journal went away under it: %v", err)
	}
	if _, err := holder.Close(true, false); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cmdtest.BrighterExit(t, dir, replay...); code != cmdutil.ExitOK || !strings.Contains(out, "replayed one-"+run+" -> "+dest) {
		t.Fatalf("the replay once the holder closed: exit %d\n%s%s", code, out, errOut)
	}
}

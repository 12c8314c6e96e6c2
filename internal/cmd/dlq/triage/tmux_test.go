package triage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// tmuxSession is the terminal the triage tests drive (cmdtest.TmuxSession),
// with the console's own moves.
type tmuxSession struct{ cmdtest.TmuxSession }

// startTriage is cmdtest.StartTmux for a session of this package.
func startTriage(t *testing.T, run, command string, env []string) tmuxSession {
	t.Helper()
	return tmuxSession{cmdtest.StartTmux(t, run, command, env)}
}

// triageSQS is the shared fauxqs as the console's tmux tests fill it:
// its client and a producer that sends to existing queues.
type triageSQS struct {
	emu *sqstest.Emulator
	c   *sqs.Clients
	p   broker.Producer
}

// newTriageSQS sets static AWS credentials and no EC2 metadata look-up for
// t (t.Setenv: t must not be parallel) and returns the shared fauxqs.
func newTriageSQS(t *testing.T) *triageSQS {
	t.Helper()
	emu := cmdtest.SharedSQS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	return &triageSQS{emu: emu, c: c, p: sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})}
}

// queues makes the queues named, failing t at the first error.
func (f *triageSQS) queues(t *testing.T, names ...string) {
	t.Helper()
	for _, q := range names {
		if err := sqs.NewChannelMaker(f.c, sqs.ChannelOptions{Queue: q}).EnsureChannels(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// send sends each of ms to its topic, failing t at the first error.
func (f *triageSQS) send(t *testing.T, ms ...*message.Message) {
	t.Helper()
	for _, m := range ms {
		if err := f.p.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// editThenArchive drives an open console whose dead-letter destination
// holds a1-run and a2-run (one failure group, "timeout calling payments
// ...") and a group whose sample message is other: it checks both groups
// are shown within 80 columns, searches "timeout" from the groups screen
// (enter lists the matching messages), opens a2, edits it ($EDITOR
// rewrites the body) and replays the edited copy, archives a1, and returns when the console is back at the groups showing
// other.
func (s tmuxSession) editThenArchive(run, other string) {
	s.T.Helper()
	// open: two failure groups
	sc := s.Await("both groups", func(sc string) bool {
		return strings.Contains(sc, "timeout calling payments") && strings.Contains(sc, other)
	})
	for _, l := range strings.Split(sc, "\n") {
		if len([]rune(l)) > 80 {
			s.T.Errorf("a line wider than 80 columns: %q", l)
		}
	}

	// search "timeout": enter lists its messages; open the newest (a2)
	s.Keys(false, "/")
	s.Keys(true, "timeout")
	s.Keys(false, "Enter")
	s.Await("the search's results", func(sc string) bool {
		return strings.Contains(sc, "search /timeout") && strings.Contains(sc, "a1-"+run) && strings.Contains(sc, "a2-"+run) && !strings.Contains(sc, other)
	})
	s.Keys(false, "Enter")
	s.AwaitText("message a2-" + run)

	// edit it: the editor rewrites the body; replay the edited copy
	s.Keys(true, "e")
	s.AwaitText("Replay the edited message a2-" + run + " to ")
	s.Keys(true, "y")
	s.AwaitText("edit: replayed 1, failed 0")

	// archive the other message of the group (a1: back in the list)
	s.Await("a2 gone from the list", func(sc string) bool {
		return strings.Contains(sc, "a1-"+run) && !strings.Contains(sc, "a2-"+run)
	})
	s.Keys(true, "a")
	s.Await("the archive prompt naming the group and a1", func(sc string) bool {
		f := strings.Join(strings.Fields(sc), " ")
		return strings.Contains(f, "Archive 1 message (of the search /timeout") && strings.Contains(f, ": a1-"+run+") to ")
	})
	s.Keys(true, "y")
	s.AwaitText("archived 1 to")

	// back at the groups (the timeout group is gone; opening it cleared
	// the filter)
	s.Await("back at the groups", func(sc string) bool {
		return !strings.Contains(sc, "a1-"+run) && strings.Contains(sc, other)
	})
}

// TestDLQTriage_TmuxEndToEnd: the console driven in a real
// terminal (tmux, 80x24, NO_COLOR) on fauxqs: open, filter a failure group,
// open a message, edit it (EDITOR a script that rewrites the body) and
// replay the edited copy, archive another, replay a whole group with R,
// quit; then the queues and the archive file are checked from outside.
func TestDLQTriage_TmuxEndToEnd(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	f := newTriageSQS(t)
	emu := f.emu
	run := fmt.Sprintf("tx%d", time.Now().UnixNano()%1e9)
	dlq, dest := "triage-dlq-"+run, "triage-dest-"+run
	f.queues(t, dlq, dest)
	f.send(t, triageMessages(run, dest, dlq)...)

	dir := t.TempDir()
	editor := filepath.Join(dir, "fix.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf '{\"fixed\":true}' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "archive.jsonl")
	exitFile := filepath.Join(dir, "exit")
	conn := []string{"--endpoint", emu.Endpoint, "--region", sqstest.Region}
	command := fmt.Sprintf("%s dlq triage sqs://%s --to %s --archive-file %s --visibility 30s %s; echo $? > %s",
		cmdtest.Bin(t), dlq, dest, archive, strings.Join(conn, " "), exitFile)
	env := []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1", "EDITOR=" + editor}
	s := startTriage(t, run, command, env)

	s.editThenArchive(run, "order has no customer")
	// replay the other group with R
	s.Keys(true, "R")
	s.AwaitText("Replay 1 message (group ")
	s.Keys(true, "y")
	s.AwaitText("replayed 1, failed 0")
	s.Keys(true, "q")
	s.AwaitExit(exitFile)

	// from outside: the DLQ is empty, the destination holds the edited a2
	// and b1, the archive holds a1
	peek := func(q string) string {
		return cmdtest.Brighter(t, t.TempDir(), append([]string{"dlq", "peek", "sqs://" + q, "-o", "json"}, conn...)...)
	}
	if left := peek(dlq); strings.TrimSpace(left) != "" {
		t.Errorf("the DLQ still holds:\n%s", left)
	}
	at := peek(dest)
	if ids := dlqtest.CrashIDs(t, []byte(at)); len(ids) != 2 || ids["a2-"+run] != 1 || ids["b1-"+run] != 1 {
		t.Errorf("the destination holds %v, want a2 (edited) and b1", ids)
	}
	checkEditedA2(t, run, at)
	checkArchiveA1(t, run, archive)
}

// TestDLQTriage_TmuxMissingQueue: on a terminal, a queue that does
// not exist is reported as peek reports it (exit 1, the error on stderr,
// naming the queue) and no console opens on it.
func TestDLQTriage_TmuxMissingQueue(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	emu := cmdtest.SharedSQS(t)
	run := fmt.Sprintf("tm%d", time.Now().UnixNano()%1e9)
	s := cmdtest.StartBrighterInTmux(t, run, fmt.Sprintf("dlq triage sqs://no-such-%s --endpoint %s --region %s", run, emu.Endpoint, sqstest.Region),
		[]string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1"})
	if code := s.AwaitExitCode(); code != "1" {
		t.Errorf("triage of a missing queue exited %s, want 1", code)
	}
	stderr := s.Stderr()
	if !strings.Contains(stderr, "brighter: sqs://no-such-"+run) || !strings.Contains(stderr, "the queue does not exist") {
		t.Errorf("stderr does not report the missing queue: %q", stderr)
	}
}

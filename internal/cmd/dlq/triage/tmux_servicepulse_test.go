package triage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/message"
)

// consoleSizes are the terminal sizes (columns x rows) each end-to-end
// scenario of the console runs at: the smallest usual terminal and a large
// one.
var consoleSizes = []struct{ w, h int }{{80, 24}, {200, 60}}

// TestDLQTriage_TmuxCopiesNotesRetriesArchive: the console in a real
// terminal (tmux, NO_COLOR, at each of consoleSizes) on fauxqs:
// copiesNotesRetriesArchive.
func TestDLQTriage_TmuxCopiesNotesRetriesArchive(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	emu := cmdtest.SharedSQS(t)
	// fauxqs's static credentials: in this process's environment already
	// (cmdtest.Main), and given to the console's below.
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	ctx := context.Background()
	eachConsoleSize(t, "sp", func(t *testing.T, dlq, dest string) triageSetup {
		for _, q := range []string{dlq, dest} {
			if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q}).EnsureChannels(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return triageSetup{
			deadLetter: sendWith(ctx, p),
			args:       fmt.Sprintf("sqs://%s --to %s --endpoint %s --region %s", dlq, dest, emu.Endpoint, sqstest.Region),
			env:        []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true"},
			peek: func(t *testing.T) ([]byte, error) {
				cmd := exec.Command(cmdtest.Bin(t), "dlq", "peek", "sqs://"+dlq, "-o", "json", "--endpoint", emu.Endpoint, "--region", sqstest.Region)
				cmd.Env = cmdtest.Env()
				return cmd.Output()
			},
		}
	})
}

// eachConsoleSize runs copiesNotesRetriesArchive at each of consoleSizes,
// in parallel subtests, on a dead-letter destination and a replay
// destination of their own (names with prefix and the run) that setup
// makes ready; setup returns the rest of the triageSetup.
func eachConsoleSize(t *testing.T, prefix string, setup func(t *testing.T, dlq, dest string) triageSetup) {
	t.Helper()
	for _, size := range consoleSizes {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			t.Parallel()
			run := fmt.Sprintf("%s%dw%d", prefix, time.Now().UnixNano()%1e9, size.w)
			dlq, dest := "triage-dlq-"+run, "triage-dest-"+run
			su := setup(t, dlq, dest)
			su.run, su.dlq, su.dest, su.w, su.h = run, dlq, dest, size.w, size.h
			copiesNotesRetriesArchive(t, su)
		})
	}
}

// sendWith is a triageSetup's deadLetter: p sends the stamped message.
func sendWith(ctx context.Context, p broker.Producer) func(t *testing.T, m *message.Message) {
	return func(t *testing.T, m *message.Message) {
		t.Helper()
		if err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
}

// triageSetup is a transport's dead-letter destination and replay
// destination, made ready for copiesNotesRetriesArchive.
type triageSetup struct {
	// run makes the ids and the tmux socket unique to this test run.
	run string
	// dlq is the dead-letter destination's name as the console shows it:
	// the restore's destination, and the name messages are stamped with.
	dlq string
	// dest is the replay destination's name as --to gives it.
	dest string
	// deadLetter stores the stamped message in the dead-letter
	// destination (once a call: twice stores two copies).
	deadLetter func(t *testing.T, m *message.Message)
	// args is dlq triage's source, --to and connection flags.
	args string
	// env is the console's environment beyond NO_COLOR and XDG_STATE_HOME.
	env []string
	// peek is dlq peek -o json of the dead-letter destination.
	peek func(t *testing.T) ([]byte, error)
	// w and h are the terminal's columns and rows.
	w, h int
}

// copiesNotesRetriesArchive drives the console of su in a real terminal
// (tmux, su.w x su.h, NO_COLOR): an id stored twice is marked ×2 on both rows;
// a note typed on its group (n) is shown on the groups screen and kept for
// the next console; a message replayed twice, dead-lettered again after
// each, shows "×2 failed again" and both replays in its view (the retry
// history in the state directory); a message archived (a) is shown by the
// archived view (A), which takes no archive there; selected (space) and
// restored (r, y) it is marked ↺ and a second r names the copy already in
// the dead-letter destination; A goes back to the dead letters with it
// among them, dlq peek finds it there once, and --log-file has the
// restore's audit record; a second console shows the note, and one a on a
// row of the id stored twice archives both copies into the archive file.
func copiesNotesRetriesArchive(t *testing.T, su triageSetup) {
	t.Helper()
	run, dlq, dest := su.run, su.dlq, su.dest
	deadLetter := func(id, why string, at time.Time) {
		t.Helper()
		m := message.New(id, "orders", message.MTCommand, []byte(`{}`))
		su.deadLetter(t, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: why}, at))
	}
	now := time.Now().Add(-time.Hour)
	d1, r1, x1 := "d1-"+run, "r1-"+run, "x1-"+run
	deadLetter(d1, "stored twice by two restores", now)
	deadLetter(d1, "stored twice by two restores", now)
	deadLetter(r1, "payments timed out", now)
	deadLetter(x1, "customer unknown", now)
	dir := t.TempDir()
	state, archive, logFile := filepath.Join(dir, "state"), filepath.Join(dir, "archive.jsonl"), filepath.Join(dir, "triage.log")
	open := func(exitFile string) tmuxSession {
		command := fmt.Sprintf("%s dlq triage %s --refresh 1s --visibility 30s --archive-file %s --log-file %s; echo $? > %s",
			cmdtest.Bin(t), su.args, archive, logFile, exitFile)
		return startTriageAt(t, run+fmt.Sprint(len(exitFile)%7), command, append(slices.Clone(su.env), "NO_COLOR=1", "XDG_STATE_HOME="+state), su.w, su.h)
	}
	exitFile := filepath.Join(dir, "exit")
	s := open(exitFile)
	s.Await("three groups", func(sc string) bool {
		return strings.Contains(sc, "stored twice") && strings.Contains(sc, "payments timed out") && strings.Contains(sc, "customer unknown")
	})

	// copies: both rows of d1 marked ×2
	s.Keys(true, "/"+d1)
	s.Keys(false, "Enter")
	s.Await("d1's two copies, each ×2", func(sc string) bool { return strings.Count(sc, d1+" ×2") == 2 })
	s.Keys(false, "Escape")
	s.Await("back at the groups, on d1's group", func(sc string) bool { return !strings.Contains(sc, "search /") && strings.Contains(sc, "row 1 of 3") })

	// a note on the group under the cursor (d1's: the largest)
	s.Keys(true, "n")
	s.AwaitText("note on group")
	s.Keys(true, "restored twice on Monday, purge one")
	s.Keys(false, "Enter")
	s.Await("the note on the groups screen", func(sc string) bool {
		return strings.Contains(sc, "✎ stored twice") && strings.Contains(sc, "✎ restored twice on Monday, purge one")
	})

	// r1 replayed twice, dead-lettered again after each
	for i := 1; i <= 2; i++ {
		s.Keys(true, "/"+r1)
		s.Keys(false, "Enter")
		s.AwaitText("1 message matching")
		s.Keys(true, "r")
		s.AwaitText("Replay 1 message")
		s.Keys(true, "y")
		s.AwaitText("replayed 1, failed 0")
		s.Await("r1 gone", func(sc string) bool { return !strings.Contains(sc, r1) })
		deadLetter(r1, "payments timed out", time.Now())
		s.Await("the groups again, r1 back", func(sc string) bool {
			return strings.Contains(sc, "payments timed out") && strings.Contains(sc, fmt.Sprintf("%d failed again", 1))
		})
	}
	s.Keys(true, "/"+r1)
	s.Keys(false, "Enter")
	s.AwaitText("×2 failed again")
	s.Keys(false, "Enter")
	s.Await("r1's retry history", func(sc string) bool {
		f := strings.Join(strings.Fields(sc), " ")
		return strings.Contains(f, "retry history (2)") && strings.Count(f, "replay to "+dest) == 2 && strings.Contains(f, "failed again: dead-lettered again")
	})
	s.Keys(false, "Escape")
	s.Await("back at the list", func(sc string) bool { return !strings.Contains(sc, "retry history") })
	s.Keys(false, "Escape")
	s.Await("back at the groups", func(sc string) bool { return !strings.Contains(sc, "search /") })

	// archive x1, then the archived view shows it, read-only
	s.Keys(true, "/"+x1)
	s.Keys(false, "Enter")
	s.AwaitText("1 message matching")
	s.Keys(true, "a")
	s.AwaitText("Archive 1 message")
	s.Keys(true, "y")
	s.AwaitText("archived 1 to")
	s.Await("x1 gone", func(sc string) bool { return !strings.Contains(sc, "customer unknown") })
	s.Keys(true, "A")
	s.Await("the archived view", func(sc string) bool {
		return strings.Contains(sc, "ARCHIVED") && strings.Contains(sc, "customer unknown") && !strings.Contains(sc, "payments timed out")
	})
	s.Keys(false, "Enter")
	s.AwaitText(x1)
	s.Keys(true, "a")
	s.AwaitText("the archived view is read-only")

	// restore the selection (x1) from the archived view into the
	// dead-letter queue: asked with the count and the destination, then
	// marked ↺ there; a second r names the copy already there
	s.Keys(false, "Space")
	s.AwaitText("*" + x1) // the row's selection mark
	s.Keys(true, "r")
	s.Await("the restore's confirmation", func(sc string) bool {
		f := strings.Join(strings.Fields(sc), " ")
		return strings.Contains(f, "Restore 1 message") && strings.Contains(f, "dead-letter destination "+dlq)
	})
	s.Keys(true, "y")
	s.AwaitText("restored 1 to " + dlq)
	s.AwaitText(x1 + " ↺")
	s.Keys(true, "r")
	s.Await("the second restore names the copy there", func(sc string) bool {
		return strings.Contains(strings.Join(strings.Fields(sc), " "), "already holds 1 of them: "+x1+" (1 copy)")
	})
	s.Keys(true, "n")
	s.AwaitText("cancelled; nothing was changed")
	s.Keys(true, "A")
	s.Await("the dead letters again, x1 among them", func(sc string) bool {
		return !strings.Contains(sc, "ARCHIVED") && strings.Contains(sc, "payments timed out") && strings.Contains(sc, "customer unknown")
	})
	// x1's history names the restore (from the archive file, into the
	// DLQ); it is no retry
	s.Keys(true, "/"+x1)
	s.Keys(false, "Enter")
	s.AwaitText("restored")
	s.Keys(false, "Enter")
	s.Await("x1's history", func(sc string) bool {
		f := strings.Join(strings.Fields(sc), "")
		return strings.Contains(f, "history:1restore") && strings.Contains(f, "restorefrom"+archive+"to"+dlq)
	})
	s.Keys(false, "Escape")
	s.Await("back at the list", func(sc string) bool { return !strings.Contains(sc, "restore from") })
	s.Keys(false, "Escape")
	s.Await("back at the groups", func(sc string) bool { return !strings.Contains(sc, "search /") })
	s.Keys(true, "q")
	s.AwaitExit(exitFile)
	out, err := su.peek(t)
	if err != nil || strings.Count(string(out), `"id":"`+x1+`"`) != 1 {
		t.Fatalf("dlq peek after the restore (%v): want x1 once in %s:\n%s", err, dlq, out)
	}
	audit, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(audit), "action=restore ids="+x1+" destination="+dlq) {
		t.Fatalf("no audit record of the restore in --log-file (%v):\n%s", err, audit)
	}

	// the note is kept: a new console shows it
	exit2 := filepath.Join(dir, "exit-2")
	s = open(exit2)
	s.AwaitText("✎ restored twice on Monday, purge one")
	// d1's two copies archived at once: both leave the dead letters, both
	// are in the archive file
	s.Keys(true, "/"+d1)
	s.Keys(false, "Enter")
	s.Await("d1's two copies", func(sc string) bool { return strings.Count(sc, d1+" ×2") == 2 })
	s.Keys(true, "a")
	s.Await("the archive's confirmation counts both copies", func(sc string) bool {
		return strings.Contains(strings.Join(strings.Fields(sc), " "), "Archive 2 messages")
	})
	s.Keys(true, "y")
	s.AwaitText("archived 2 to")
	s.Await("d1 gone", func(sc string) bool { return !strings.Contains(sc, "stored twice") })
	s.Keys(true, "q")
	s.AwaitExit(exit2)
	if b, err := os.ReadFile(archive); err != nil || strings.Count(string(b), `"id":"`+d1+`"`) != 2 {
		t.Fatalf("the archive file (%v) does not hold d1's two copies:\n%s", err, b)
	}
	if out, err := su.peek(t); err != nil || strings.Contains(string(out), `"id":"`+d1+`"`) {
		t.Fatalf("dlq peek after d1's archive (%v): d1 is still in %s:\n%s", err, dlq, out)
	}
}

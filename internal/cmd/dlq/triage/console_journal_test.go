package triage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// TestDLQTriage_ConsoleReplayResumesTheJournal: the console's replay
// keeps dlq replay's journal (the same file, in the state directory): a
// copy an earlier run recorded sent, whose message it did not remove (a
// console or dlq replay killed between the two), is removed by the
// console's r without being published again (the destination receives
// nothing, the result says so), and the journal, with nothing left to
// resume, is deleted. On fauxqs and Google's Pub/Sub emulator.
func TestDLQTriage_ConsoleReplayResumesTheJournal(t *testing.T) {
	for _, mk := range []func(*testing.T, context.Context, string) dlqtest.AllowCase{dlqtest.SQSAllowCase, dlqtest.GCPAllowCase} {
		ctx := context.Background()
		run := "cj" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
		for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_EC2_METADATA_DISABLED": "true", "XDG_STATE_HOME": cmdtest.StateDir()} {
			t.Setenv(k, v)
		}
		c := mk(t, ctx, run)
		t.Run(c.Name, func(t *testing.T) {
			dir, file := c.Prepare(t)
			a := testOptions(file, filepath.Join(dir, "archive.jsonl"), c.FanOut).testActions(t, ctx, "orders")
			first, err := a.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			id := "known2-" + run
			var rid string
			for _, m := range first {
				if m.Header.MessageID == id {
					rid = inspect.ReplayID(m, a.t.URL)
				}
			}
			if rid == "" {
				t.Fatalf("%s is not in the dead-letter destination", id)
			}
			// An earlier run, killed after its publish of id's copy and
			// before the remove, left this journal.
			j, err := a.o.OpenJournal(a.t)
			if err != nil {
				t.Fatal(err)
			}
			path := j.Path()
			if err := errors.Join(j.Sending([]string{rid}), j.Published([]string{rid})); err != nil {
				t.Fatal(err)
			}
			if _, err := j.Close(true, false); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(path, filepath.Join(cmdtest.StateDir(), "brighter", "replay")+string(os.PathSeparator)) || !strings.HasSuffix(path, ".journal") {
				t.Fatalf("the journal is %s, not dlq replay's default under %s", path, cmdtest.StateDir())
			}
			d := &consoleDriver{t: t, m: triage.New(ctx, a, time.Now).WithMessages(first)}
			d.send(tea.WindowSizeMsg{Width: 200, Height: 60})
			d.keys("/", id, "enter", "r")
			if s := d.screen(); !strings.Contains(s, "Replay 1 message") {
				t.Fatalf("r on %s does not ask:\n%s", id, s)
			}
			d.keys("y")
			s := d.screen()
			if !strings.Contains(s, "replayed 1, failed 0") || !strings.Contains(s, "1 copy an earlier run had sent (the replay journal says) removed, not sent again") {
				t.Errorf("the result does not say the copy was resumed from the journal:\n%s", s)
			}
			_, out, _ := cmdtest.BrighterExit(t, dir, c.PeekAudit...)
			if strings.Contains(out, id) {
				t.Errorf("the console published %s again, although the journal records its copy sent:\n%s", id, out)
			}
			ms, err := a.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if m.Header.MessageID == id {
					t.Errorf("%s is still in the dead-letter destination", id)
				}
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("the journal %s was kept after a clean replay that resumed its only copy (stat: %v)", path, err)
			}
		})
	}
}

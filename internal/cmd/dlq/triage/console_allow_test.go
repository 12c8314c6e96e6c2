package triage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// editCapture is the console's actions as dlq triage wires them, keeping
// the last edit the console started so the test can play its editor.
type editCapture struct {
	*triageActions
	ed triage.Editing
}

func (c *editCapture) Edit(m *message.Message) (triage.Editing, error) {
	ed, err := c.triageActions.Edit(m)
	c.ed = ed
	return ed, err
}

// consoleDriver feeds a triage model keys and every message its commands
// produce, as the bubbletea runtime would, without a terminal.
type consoleDriver struct {
	t *testing.T
	m tea.Model
}

func (d *consoleDriver) send(msg tea.Msg) {
	queue := []tea.Msg{msg}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		var cmd tea.Cmd
		d.m, cmd = d.m.Update(next)
		cmds := []tea.Cmd{cmd}
		for len(cmds) > 0 {
			c := cmds[0]
			cmds = cmds[1:]
			if c == nil {
				continue
			}
			switch out := c().(type) {
			case nil, tea.QuitMsg:
			case tea.BatchMsg:
				cmds = append(cmds, out...)
			default:
				queue = append(queue, out)
			}
		}
	}
}

func (d *consoleDriver) keys(ks ...string) {
	for _, k := range ks {
		switch k {
		case "enter":
			d.send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "esc":
			d.send(tea.KeyPressMsg{Code: tea.KeyEscape})
		default:
			for _, r := range k {
				d.send(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
		}
	}
}

func (d *consoleDriver) screen() string {
	return strings.Join(strings.Fields(ansi.Strip(d.m.(triage.Model).Render())), " ")
}

// TestDLQTriage_ConsoleAppliesTheAllowList: the console's r (on the
// message), R (on its group) and e (an edited copy) of a dead letter whose
// originalTopic is forged to name a queue the subscriptions file does not
// know for this dead-letter destination each ask with the destination
// marked refused, and, answered y, publish nothing there: the victim queue
// is read from outside and is empty, and the message is still in the
// dead-letter queue. On fauxqs.
func TestDLQTriage_ConsoleAppliesTheAllowList(t *testing.T) {
	run := "ca" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	ctx := context.Background()
	fix := filepath.Join(t.TempDir(), "fix.sh")
	if err := os.WriteFile(fix, []byte("#!/bin/sh\nprintf '{\"edited\":true}' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", fix)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_EC2_METADATA_DISABLED": "true"} {
		t.Setenv(k, v)
	}
	c := dlqtest.SQSAllowCase(t, ctx, run)
	dir, file := c.Prepare(t)
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}, Getenv: os.LookupEnv}
	o := &Options{archiveFile: filepath.Join(dir, "archive.jsonl"), ReplayOptions: &shared.ReplayOptions{Options: &shared.Options{
		IO: io, Factory: &factory.Factory{IOStreams: io, LogFormat: "text", LogLevel: "warn"}, Transports: transport.Default(), Now: time.Now,
		ConfigPath: file, Visibility: time.Minute, Wait: 2 * time.Second}}}
	logger, err := o.Factory.Logger()
	if err != nil {
		t.Fatal(err)
	}
	a, err := o.actions(ctx, "orders", logger)
	if err != nil {
		t.Fatal(err)
	}
	acts := &editCapture{triageActions: a}
	first, err := a.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := &consoleDriver{t: t, m: triage.New(ctx, acts, time.Now).WithMessages(first)}
	d.send(tea.WindowSizeMsg{Width: 200, Height: 60})
	forged := "forged-" + run
	victimEmpty := func(after string) {
		t.Helper()
		_, out, _ := cmdtest.BrighterExit(t, dir, c.PeekVictim...)
		if strings.TrimSpace(out) != "" {
			t.Fatalf("after %s the forged destination %s holds:\n%s", after, c.Victim, out)
		}
		if !strings.Contains(d.screen(), forged) && !strings.Contains(d.screen(), c.Victim) {
			t.Fatalf("after %s the forged message is gone from the console:\n%s", after, d.screen())
		}
	}
	asks := func(what string) {
		t.Helper()
		if s := d.screen(); !strings.Contains(s, c.Victim+" (refused: not on the allow-list)") {
			t.Fatalf("%s does not mark the forged destination refused:\n%s", what, s)
		}
	}

	// r on the message, found by a search from the groups screen
	d.keys("/", forged, "enter", "r")
	asks("r")
	d.keys("y")
	if s := d.screen(); !strings.Contains(s, "refused 1") {
		t.Errorf("r: no refusal in the result:\n%s", s)
	}
	victimEmpty("r")

	// R on its group (esc from the search's results puts the cursor there)
	d.keys("esc", "R")
	asks("R")
	d.keys("y")
	victimEmpty("R")

	// e: the edited copy
	d.keys("/", forged, "enter", "enter", "e")
	if acts.ed == nil {
		t.Fatalf("e started no edit:\n%s", d.screen())
	}
	if err := acts.ed.Command().Run(); err != nil {
		t.Fatal(err)
	}
	d.send(triage.Edited(forged, acts.ed, nil))
	asks("e")
	d.keys("y")
	victimEmpty("e")
	ms, err := a.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range ms {
		found = found || m.Header.MessageID == forged
	}
	if !found {
		t.Errorf("the forged message left the dead-letter queue")
	}
}

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

	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// editCapture is the console's actions as dlq triage wires them, keeping
// the last edit (e) or header edit (E) the console started so the test can
// play its editor.
type editCapture struct {
	*triageActions
	ed triage.Editing
}

func (c *editCapture) Edit(ctx context.Context, m *message.Message) (triage.Editing, error) {
	ed, err := c.triageActions.Edit(ctx, m)
	c.ed = ed
	return ed, err
}

func (c *editCapture) EditHeaders(ctx context.Context, m *message.Message) (triage.Editing, error) {
	ed, err := c.triageActions.EditHeaders(ctx, m)
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

// testOptions are dlq triage's options on the subscriptions file file,
// archiving to archive, with fanOut as --fan-out, the emulators'
// transports, warnings logged as text to an in-memory stream, a one-minute
// visibility and a two-second wait for dead letters.
func testOptions(file, archive string, fanOut bool) *Options {
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}, Getenv: os.LookupEnv}
	return &Options{archiveFile: archive, ReplayOptions: &shared.ReplayOptions{FanOut: fanOut, Options: &shared.Options{
		IO: io, Factory: &factory.Factory{IOStreams: io, LogFormat: "text", LogLevel: "warn"}, Transports: transport.Default(), Now: time.Now,
		ConfigPath: file, Visibility: time.Minute, Wait: 2 * time.Second}}}
}

// testActions are the console's actions on the dead letters of the
// subscription to, as dlq triage wires them with o; it fails the test when
// they cannot be made.
func (o *Options) testActions(t *testing.T, ctx context.Context, to string) *triageActions {
	t.Helper()
	logger, err := o.Factory.Logger()
	if err != nil {
		t.Fatal(err)
	}
	a, err := o.actions(ctx, to, logger)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sqsConsole is dlq triage's console on the queues of a
// dlqtest.SQSAllowCase (on fauxqs), driven without a terminal.
type sqsConsole struct {
	c    dlqtest.AllowCase
	dir  string         // the case's directory: its subscriptions file and the archive
	a    *triageActions // the actions as dlq triage wires them
	acts *editCapture   // a, keeping the last edit the console started
	d    *consoleDriver
}

// startSQSConsole sets $EDITOR to a shell script holding editor, the
// emulator's credentials and env, seeds a dlqtest.SQSAllowCase whose
// names end in run, and opens the console, 200 columns by 60 lines, on the
// dead letters of its orders subscription. It fails the test on any error.
func startSQSConsole(t *testing.T, ctx context.Context, run, editor string, env map[string]string) *sqsConsole {
	t.Helper()
	script := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(script, []byte(editor), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", script)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_EC2_METADATA_DISABLED": "true"} {
		t.Setenv(k, v)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	c := dlqtest.SQSAllowCase(t, ctx, run)
	dir, file := c.Prepare(t)
	a := testOptions(file, filepath.Join(dir, "archive.jsonl"), false).testActions(t, ctx, "orders")
	acts := &editCapture{triageActions: a}
	first, err := a.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := &consoleDriver{t: t, m: triage.New(ctx, acts, time.Now).WithMessages(first)}
	d.send(tea.WindowSizeMsg{Width: 200, Height: 60})
	return &sqsConsole{c: c, dir: dir, a: a, acts: acts, d: d}
}

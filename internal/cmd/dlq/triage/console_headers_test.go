package triage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// headerCapture keeps the last header edit the console started.
type headerCapture struct {
	*triageActions
	ed triage.Editing
}

func (c *headerCapture) EditHeaders(m *message.Message) (triage.Editing, error) {
	ed, err := c.triageActions.EditHeaders(m)
	c.ed = ed
	return ed, err
}

// TestDLQTriage_ConsoleEditsHeaders: on fauxqs, E on a dead letter opens
// its headers and bag as YAML in $EDITOR (as dlq edit --headers); the
// confirmation names the destination; y replays the edited copy, which
// carries the bag entry the editor added; E on a message whose
// originalTopic is forged asks with the destination marked refused and,
// answered y, publishes nothing there; a bag key the replay writes itself
// is refused as dlq edit --set refuses it, and nothing is sent.
func TestDLQTriage_ConsoleEditsHeaders(t *testing.T) {
	run := "eh" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	ctx := context.Background()
	editor := filepath.Join(t.TempDir(), "headers.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i \"s/^bag:.*$/bag:\\n    ${ADD:-fixedBy: ops}/\" \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", editor)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_EC2_METADATA_DISABLED": "true", "XDG_STATE_HOME": t.TempDir()} {
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
	acts := &headerCapture{triageActions: a}
	first, err := a.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := &consoleDriver{t: t, m: triage.New(ctx, acts, time.Now).WithMessages(first)}
	d.send(tea.WindowSizeMsg{Width: 200, Height: 60})
	edit := func(id string) {
		t.Helper()
		acts.ed = nil
		d.keys("esc", "esc", "esc", "/", id, "enter", "enter", "E")
		if acts.ed == nil {
			t.Fatalf("E started no header edit of %s:\n%s", id, d.screen())
		}
		if err := acts.ed.Command().Run(); err != nil {
			t.Fatal(err)
		}
		d.send(triage.Edited(id, acts.ed, nil))
	}

	// a bag key the replay writes itself: refused, nothing sent
	t.Setenv("ADD", "replayedFrom: elsewhere")
	edit("known2-" + run)
	if s := d.screen(); !strings.Contains(s, "is not valid") || !strings.Contains(s, "replayedFrom") {
		t.Fatalf("an edit setting replayedFrom is not refused:\n%s", s)
	}
	d.keys("n")
	t.Setenv("ADD", "")

	// known2: its copy goes to audit with the added bag entry
	edit("known2-" + run)
	if s := d.screen(); !strings.Contains(s, "Replay the edited message known2-"+run+" to "+c.Audit) {
		t.Fatalf("the confirmation does not name the destination:\n%s", s)
	}
	d.keys("y")
	if s := d.screen(); !strings.Contains(s, "edit: replayed 1, failed 0") {
		t.Fatalf("the edited copy was not replayed:\n%s", s)
	}
	_, out, _ := cmdtest.BrighterExit(t, dir, c.PeekAudit...)
	if !strings.Contains(out, "known2-"+run) || !strings.Contains(out, `"fixedBy":"ops"`) {
		t.Errorf("audit holds no edited copy with fixedBy: ops:\n%s", out)
	}

	// forged: refused, nothing at the victim
	edit("forged-" + run)
	if s := d.screen(); !strings.Contains(s, c.Victim+" (refused: not on the allow-list)") {
		t.Fatalf("E does not mark the forged destination refused:\n%s", s)
	}
	d.keys("y")
	if _, out, _ := cmdtest.BrighterExit(t, dir, c.PeekVictim...); strings.TrimSpace(out) != "" {
		t.Errorf("the forged destination %s holds:\n%s", c.Victim, out)
	}
}

package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/tui/triage"
)

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
	con := startSQSConsole(t, ctx, run, "#!/bin/sh\nsed -i \"s/^bag:.*$/bag:\\n    ${ADD:-fixedBy: ops}/\" \"$1\"\n", map[string]string{"XDG_STATE_HOME": t.TempDir()})
	c, dir, acts, d := con.c, con.dir, con.acts, con.d
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

package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/tui/triage"
)

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
	con := startSQSConsole(t, ctx, run, "#!/bin/sh\nprintf '{\"edited\":true}' > \"$1\"\n", nil)
	c, dir, a, acts, d := con.c, con.dir, con.a, con.acts, con.d
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

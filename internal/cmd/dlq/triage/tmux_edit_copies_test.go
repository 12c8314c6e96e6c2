package triage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQTriage_TmuxEditRefusesCopiesThatDiffer: the console's edit on a
// real terminal (tmux, fauxqs) of an id stored twice refuses, as dlq edit
// does, before the editor runs and before anything is sent: e on copies
// whose bodies differ, E on copies whose bags differ (naming the key); on
// two copies one edit fits, the confirmation says the edit goes to both
// and shows the edited body, and y replays both. The refused copies stay
// in the dead-letter queue; only the edited copies reach the destination.
func TestDLQTriage_TmuxEditRefusesCopiesThatDiffer(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "tec", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	at := time.Now().Add(-time.Minute)
	for _, c := range []struct {
		id, body string
		bag      map[string]string
	}{
		{"m1-" + run, `{"n":1}`, nil}, {"m1-" + run, `{"n":"one"}`, nil},
		{"m2-" + run, `{"n":2}`, map[string]string{"tenant": "a"}}, {"m2-" + run, `{"n":2}`, map[string]string{"tenant": "b"}},
		{"m3-" + run, `{"n":3}`, nil}, {"m3-" + run, `{"n":3}`, nil},
	} {
		m := message.New(c.id, dest, message.MTCommand, []byte(c.body))
		for k, v := range c.bag {
			m.Header.Bag[k] = v
		}
		at = at.Add(time.Second)
		if err := p.Send(ctx, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, at)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	ran := filepath.Join(dir, "editor-ran")
	editor := filepath.Join(dir, "fix.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\ntouch "+ran+"\nprintf '{\"fixed\":true}' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	exitFile := filepath.Join(dir, "exit")
	command := fmt.Sprintf("%s dlq triage sqs://%s --to %s --visibility 30s --wait 1s %s; echo $? > %s",
		cmdtest.Bin(t), dlq, dest, strings.Join(conn, " "), exitFile)
	env := []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1", "EDITOR=" + editor}
	s := startTriage(t, run, command, env)
	flat := func(sc string) string { return strings.Join(strings.Fields(sc), " ") }
	open := func(id string) {
		s.AwaitText("drill")
		s.Keys(true, "/"+id)
		s.Keys(false, "Enter")
		s.AwaitText("2 messages matching")
		s.Keys(false, "Enter")
		s.AwaitText("message " + id)
	}
	back := func() {
		s.Keys(false, "Escape")
		s.Await("back at the list", func(sc string) bool { return strings.Contains(sc, "messages matching") })
		s.Keys(false, "Escape")
		s.Await("back at the groups", func(sc string) bool { return !strings.Contains(sc, "search /") })
	}

	open("m1-" + run)
	s.Keys(true, "e")
	s.Await("e refused on bodies that differ", func(sc string) bool {
		return strings.Contains(flat(sc), "2 stored copies whose bodies differ")
	})
	back()
	open("m2-" + run)
	s.Keys(true, "E")
	s.Await("E refused on bags that differ", func(sc string) bool {
		return strings.Contains(flat(sc), `2 stored copies whose headers differ ("bag.tenant")`)
	})
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the editor ran for an edit the console refuses")
	}
	back()
	open("m3-" + run)
	s.Keys(true, "e")
	s.Await("the confirmation naming both copies and the edited body", func(sc string) bool {
		f := flat(sc)
		return strings.Contains(f, "Replay the edit of m3-"+run+" to each of its 2 stored copies") && strings.Contains(f, `Edited: {"fixed":true}`)
	})
	s.Keys(true, "y")
	s.AwaitText("edit: replayed 2, failed 0")
	s.Keys(true, "q")
	s.AwaitExit(exitFile)

	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 2 || left["m1-"+run] != 2 || left["m2-"+run] != 2 {
		t.Errorf("the dead-letter queue holds %v, want both copies of m1 and of m2", left)
	}
	if got := dlqtest.CrashDestIDs(t, dest, conn); len(got) != 1 || got["m3-"+run] != 2 {
		t.Errorf("the destination holds %v, want the two edited copies of m3", got)
	}
}

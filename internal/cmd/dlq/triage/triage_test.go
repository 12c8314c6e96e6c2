package triage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// TestDLQTriageActions_EveryTransport: the console's actions, as
// cmd wires them, on SQS (fauxqs), Pub/Sub (Google's emulator) and RocketMQ
// (the test broker): Load reads every dead letter and holds none after;
// the confirmation's destinations mark the forged originalTopic refused; a
// dry-run replay changes nothing; Replay moves known1 to orders; Edit
// (EDITOR a script) replays known2 edited to audit; Archive writes forged
// to the file and removes it, leaving the destination empty; Restore puts
// it back, and refuses a second copy that is not confirmed.
func TestDLQTriageActions_EveryTransport(t *testing.T) {
	run := "tr" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	ctx := context.Background()
	tools := t.TempDir()
	fix := filepath.Join(tools, "fix.sh")
	if err := os.WriteFile(fix, []byte("#!/bin/sh\nprintf '{\"edited\":true}' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", fix)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_EC2_METADATA_DISABLED": "true"} {
		t.Setenv(k, v)
	}
	for _, c := range []dlqtest.AllowCase{dlqtest.SQSAllowCase(t, ctx, run), dlqtest.GCPAllowCase(t, ctx, run), dlqtest.RocketMQAllowCase(t, ctx, run)} {
		t.Run(c.Name, func(t *testing.T) {
			dir, file := c.Prepare(t)
			archive := filepath.Join(dir, "archive.jsonl")
			a := testOptions(file, archive, c.FanOut).testActions(t, ctx, "orders")
			load := func() []string {
				ms, err := a.Load(ctx)
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				var ids []string
				for _, m := range ms {
					ids = append(ids, m.Header.MessageID)
				}
				slices.Sort(ids)
				return ids
			}
			byID := func(id string) *message.Message {
				ms, err := a.Load(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range ms {
					if m.Header.MessageID == id {
						return m
					}
				}
				t.Fatalf("%s is not in the dead-letter destination", id)
				return nil
			}
			want := []string{"forged-" + run, "known1-" + run, "known2-" + run}
			if ids := load(); !slices.Equal(ids, want) {
				t.Fatalf("loaded %v, want %v", ids, want)
			}
			// A second load sees them all again: the first held none.
			if ids := load(); !slices.Equal(ids, want) {
				t.Fatalf("second load %v, want %v", ids, want)
			}
			dests := strings.Join(a.ReplayDestinations([]*message.Message{byID("known1-" + run), byID("forged-" + run)}), "|")
			if !strings.Contains(dests, c.Orders) || !strings.Contains(dests, c.Victim+" (refused") {
				t.Errorf("confirmation destinations %q", dests)
			}
			progress := func(triage.Outcome) {}
			if res, err := a.Replay(ctx, []string{"known1-" + run}, true, progress); err != nil || res.Done != 1 {
				t.Fatalf("dry-run replay: %+v %v", res, err)
			}
			if ids := load(); len(ids) != 3 {
				t.Fatalf("a dry run changed the destination: %v", ids)
			}
			if res, err := a.Replay(ctx, []string{"known1-" + run}, false, progress); err != nil || res.Done != 1 {
				t.Fatalf("replay: %+v %v", res, err)
			}
			ed, err := a.Edit(ctx, byID("known2-"+run))
			if err != nil {
				t.Fatal(err)
			}
			if err := ed.Command().Run(); err != nil {
				t.Fatal(err)
			}
			if res, err := ed.Finish(ctx, false); err != nil || res.Done != 1 {
				t.Fatalf("edit: %+v %v", res, err)
			}
			ed.Close()
			_, audit, _ := cmdtest.BrighterExit(t, dir, c.PeekAudit...)
			if !strings.Contains(audit, `"body":"{\"edited\":true}"`) || !strings.Contains(audit, `"originalBodySha256":"`) {
				t.Errorf("no edited copy at %s:\n%s", c.Audit, audit)
			}
			// A file that is not an archive is refused untouched, as dlq
			// archive refuses it; the message stays.
			notArchive := "# notes\nnot an archive\n"
			if err := os.WriteFile(archive, []byte(notArchive), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Archive(ctx, []string{"forged-" + run}, false, progress); err == nil {
				t.Fatal("archive into a file that is not an archive: no error")
			}
			if data, _ := os.ReadFile(archive); string(data) != notArchive {
				t.Fatalf("the refused file changed: %q", data)
			}
			if err := os.Remove(archive); err != nil {
				t.Fatal(err)
			}
			if res, err := a.Archive(ctx, []string{"forged-" + run}, false, progress); err != nil || res.Done != 1 {
				t.Fatalf("archive: %+v %v", res, err)
			}
			data, err := os.ReadFile(archive)
			if err != nil || !strings.Contains(string(data), `"id":"forged-`+run+`"`) {
				t.Errorf("archive file: %v\n%s", err, data)
			}
			if ids := load(); len(ids) != 0 {
				t.Errorf("the dead-letter destination still holds %v", ids)
			}

			// Restore (the archived view's r): a dry run publishes nothing;
			// the restore puts the record back; a second one, not
			// confirmed for the id already there, is refused and
			// publishes nothing, as dlq restore without --yes.
			forged := []string{"forged-" + run}
			if res, err := a.Restore(ctx, forged, false, true, progress); err != nil || res.Done != 1 {
				t.Fatalf("dry-run restore: %+v %v", res, err)
			}
			if ids := load(); len(ids) != 0 {
				t.Fatalf("a dry-run restore published %v", ids)
			}
			if res, err := a.Restore(ctx, forged, false, false, progress); err != nil || res.Done != 1 {
				t.Fatalf("restore: %+v %v", res, err)
			}
			if ids := load(); !slices.Equal(ids, forged) {
				t.Fatalf("after the restore the destination holds %v, want %v", ids, forged)
			}
			if there, err := a.AlreadyThere(ctx, forged); err != nil || there[forged[0]] != 1 {
				t.Fatalf("already there: %v %v", there, err)
			}
			if res, err := a.Restore(ctx, forged, false, false, progress); err == nil || res.Done != 0 {
				t.Fatalf("a restore of an id already there, not confirmed: %+v %v", res, err)
			}
			if ids := load(); !slices.Equal(ids, forged) {
				t.Fatalf("the refused restore published: %v", ids)
			}
		})
	}
}

// TestDLQTriageEditCheck: the console's edit checks the edited
// body as soon as the editor returns (dlq edit's validation), so an
// invalid JSON body is refused before any replay is offered.
func TestDLQTriageEditCheck(t *testing.T) {
	m := message.New("e1", "orders", message.MTEvent, []byte(`{"orderId":1}`))
	m.Header.ContentType = "application/json"
	a := &triageActions{o: &Options{ReplayOptions: &shared.ReplayOptions{Options: &shared.Options{Now: time.Now}}}, to: "orders"}
	s, err := shared.NewEditSession(m, false, true)
	if err != nil {
		t.Fatal(err)
	}
	var ed triage.Editing = &triageEdit{a: a, s: s, dest: "orders"}
	defer ed.Close()
	if err := ed.Check(); err != nil {
		t.Fatalf("the unedited body: %v", err)
	}
	path := ed.(*triageEdit).s.BodyPath
	if err := os.WriteFile(path, []byte(`{"orderId":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ed.Check(); !errors.Is(err, inspect.ErrInvalidBody) {
		t.Fatalf("Check of an invalid JSON body = %v, want ErrInvalidBody", err)
	}
}

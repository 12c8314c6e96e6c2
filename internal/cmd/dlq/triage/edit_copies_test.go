package triage

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQTriageEdit_EveryStoredCopyOfTheID: the console's edit (e) of a
// message stored twice in the dead-letter queue (two failures of one id,
// rejection times apart; fauxqs) edits and replays both copies, as dlq
// edit does: done 2, the destination gets two edited copies, the
// dead-letter queue is empty. Before, the edit replayed one copy and left
// the other, unsaid.
func TestDLQTriageEdit_EveryStoredCopyOfTheID(t *testing.T) {
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
	run, p, conn := dlqtest.FauxqsQueues(t, "tred", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	at := time.Now().Add(-time.Minute)
	for _, when := range []time.Time{at, at.Add(time.Second)} {
		m := message.New("m1", dest, message.MTCommand, []byte(`{}`))
		if err := p.Send(ctx, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, when)); err != nil {
			t.Fatal(err)
		}
	}
	o := testOptions("", "", false)
	o.To, o.ToSet = dest, true
	o.Endpoint, o.Region = cmdtest.SharedSQS(t).Endpoint, sqstest.Region
	a := o.testActions(t, ctx, "sqs://"+dlq)
	ms, err := a.Load(ctx)
	if err != nil || len(ms) != 2 {
		t.Fatalf("load: %d messages, %v; want the two copies of m1", len(ms), err)
	}
	ed, err := a.Edit(ctx, ms[0])
	if err != nil {
		t.Fatal(err)
	}
	defer ed.Close()
	if err := ed.Command().Run(); err != nil {
		t.Fatal(err)
	}
	if res, err := ed.Finish(ctx, false); err != nil || res.Done != 2 || res.Failed != 0 {
		t.Fatalf("edit of an id stored twice: %+v %v; want both copies done", res, err)
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 0 {
		t.Errorf("the dead-letter queue still holds %v", left)
	}
	if got := dlqtest.CrashDestIDs(t, dest, conn); got["m1"] != 2 {
		t.Errorf("the destination holds %v, want both edited copies of m1", got)
	}
}

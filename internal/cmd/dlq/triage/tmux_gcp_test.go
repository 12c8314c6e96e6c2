package triage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQTriage_TmuxEndToEnd_PubSub: the console driven in a real
// terminal (tmux, 80x24, NO_COLOR) on Google's Pub/Sub emulator: open,
// filter a failure group, open a message, edit it (EDITOR a script that
// rewrites the body) and replay the edited copy to a topic, archive the
// other message of the group, quit; then the subscriptions and the archive
// file are checked from outside with dlq peek. The message of the other
// group is never touched and must still be in the dead-letter
// subscription: it is there so that "a1 and a2 left the DLQ" cannot pass
// because the emulator stopped redelivering nacked messages
// (docs/emulators.md, Google's Pub/Sub emulator): such a drop loses b1 too and fails the test.
func TestDLQTriage_TmuxEndToEnd_PubSub(t *testing.T) {
	t.Parallel()
	cmdtest.NeedTmux(t, "the console")
	client, ps := gcptest.Start(t, "triagetmux", nil, gcp.Connect)
	run := fmt.Sprintf("tg%d", time.Now().UnixNano()%1e9)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := func(n string) string { return "projects/" + ps.Project + "/topics/" + n }
	sub := func(n string) string { return "projects/" + ps.Project + "/subscriptions/" + n }
	// the dead-letter topic and its subscription; the destination topic
	// with one subscription (no fan-out)
	for _, n := range []string{"dlq", "dest"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub(n), Topic: topic(n), AckDeadlineSeconds: 60}); err != nil {
			t.Fatal(err)
		}
	}
	p := gcp.NewProducer(client, gcp.ProducerOptions{})
	for _, m := range triageMessages(run, "orders", "dlq") {
		if err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	peek := func(name string) string {
		return cmdtest.Brighter(t, t.TempDir(), "dlq", "peek", "pubsub://"+sub(name), "--endpoint", ps.Addr, "-o", "json")
	}
	triageEditArchiveQuit(t, run, fmt.Sprintf("pubsub://%s --to pubsub://%s --endpoint %s", sub("dlq"), topic("dest"), ps.Addr),
		[]string{"NO_COLOR=1"}, func() string { return peek("dlq") }, func() string { return peek("dest") })
}

// triageEditArchiveQuit runs dlq triage ARGS (the dead-letter destination,
// --to and the connection flags) in tmux with env, on a dead-letter
// destination holding a1-run and a2-run (rejected with "timeout calling
// payments after ...") and b1-run ("order has no customer"); it edits and
// replays a2, archives a1 and quits (editThenArchive), then checks from
// outside: peekDLQ must show b1 only (an untouched canary: a broker that
// stopped redelivering would lose it), peekDest the edited a2 only (its
// new body, editedAt, originalBodySha256) and the archive file a1 only.
func triageEditArchiveQuit(t *testing.T, run, args string, env []string, peekDLQ, peekDest func() string) {
	t.Helper()
	dir := t.TempDir()
	editor := filepath.Join(dir, "fix.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf '{\"fixed\":true}' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "archive.jsonl")
	exitFile := filepath.Join(dir, "exit")
	command := fmt.Sprintf("%s dlq triage %s --archive-file %s --visibility 30s; echo $? > %s", cmdtest.Bin(t), args, archive, exitFile)
	s := startTriage(t, run, command, append(env, "EDITOR="+editor))
	s.editThenArchive(run, "order has no customer")
	s.Keys(true, "q")
	s.AwaitExit(exitFile)

	if ids := dlqtest.CrashIDs(t, []byte(peekDLQ())); len(ids) != 1 || ids["b1-"+run] != 1 {
		t.Errorf("the DLQ holds %v, want b1 only (b1 missing: the broker stopped redelivering it)", ids)
	}
	at := peekDest()
	if ids := dlqtest.CrashIDs(t, []byte(at)); len(ids) != 1 || ids["a2-"+run] != 1 {
		t.Errorf("the destination holds %v, want the edited a2", ids)
	}
	checkEditedA2(t, run, at)
	checkArchiveA1(t, run, archive)
}

// checkEditedA2 fails t unless the edited copy of a2-run in at (dlq peek
// -o json lines) has the body the test's editor wrote, editedAt and
// originalBodySha256.
func checkEditedA2(t *testing.T, run, at string) {
	t.Helper()
	for l := range strings.SplitSeq(at, "\n") {
		if strings.Contains(l, `"id":"a2-`+run+`"`) && (!strings.Contains(l, `"body":"{\"fixed\":true}"`) || !strings.Contains(l, `"originalBodySha256":"`) || !strings.Contains(l, `"editedAt":"`)) {
			t.Errorf("a2 at the destination is not the edited copy: %s", l)
		}
	}
}

// checkArchiveA1 fails t unless the archive file holds a1-run only.
func checkArchiveA1(t *testing.T, run, archive string) {
	t.Helper()
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if ids := dlqtest.CrashIDs(t, data); len(ids) != 1 || ids["a1-"+run] != 1 {
		t.Errorf("the archive holds %v, want a1", ids)
	}
}

// triageMessages are the dead letters triageEditArchiveQuit expects, as
// brighter's routing stamps them into dlq from topic: a1-run and a2-run of
// one failure group ("timeout calling payments after ..."; a2 the newer),
// b1-run of another ("order has no customer").
func triageMessages(run, topic, dlq string) []*message.Message {
	now := time.Now()
	var ms []*message.Message
	for _, s := range []struct {
		id, why string
		at      time.Duration
	}{
		{"a1-" + run, "timeout calling payments after 30s", -time.Hour},
		{"a2-" + run, "timeout calling payments after 31s", -time.Minute},
		{"b1-" + run, "order has no customer", -2 * time.Hour},
	} {
		m := message.New(s.id, topic, message.MTCommand, []byte(`{"orderId":"`+s.id+`"}`))
		ms = append(ms, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: s.why}, now.Add(s.at)))
	}
	return ms
}

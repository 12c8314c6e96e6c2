package replay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQReplay_PubSubOneIDDeadLetteredTwiceBefore_BothReplayed: two
// subscriptions sharing a dead-letter topic both dead-lettered m1 (two
// stored copies, one id, rejection times apart), before the replay. Both
// are failures of their own: `dlq replay --to events -o json` publishes and
// removes both (two "replayed" records for m1, replayed 3 with m2, left 0),
// exit 0, and the dead-letter subscription is empty afterwards.
func TestDLQReplay_PubSubOneIDDeadLetteredTwiceBefore_BothReplayed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, srv, subName := dlqtest.PubSubTopics(t, "twice", []string{"events", "shared-dlq"},
		map[string]string{"events-sub": "events", "shared-dlq": "shared-dlq"})
	p := gcp.NewProducer(client, gcp.ProducerOptions{})
	now := time.Now()
	for _, s := range []struct {
		id string
		at time.Time
	}{{"m1", now.Add(-2 * time.Second)}, {"m1", now.Add(-time.Second)}, {"m2", now.Add(-time.Second)}} {
		m := message.New(s.id, "events", message.MTCommand, []byte(`{}`))
		if err := p.Send(ctx, message.Stamp(m, "shared-dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, s.at)); err != nil {
			t.Fatal(err)
		}
	}
	url := func(sub string) string { return "pubsub://" + subName(sub) }
	code, out, errOut := dlqtest.DLQRun(t, "replay", url("shared-dlq"), "--endpoint", srv.Addr, "--to", "events", "-o", "json")
	if code != cmdutil.ExitOK || strings.Count(out, `{"type":"message","id":"m1","destination":"events","outcome":"replayed"}`) != 2 ||
		!strings.Contains(out, `"replayed":3,"skipped":0,"failed":0,"refused":0,"left":0,`) {
		t.Fatalf("replay of two failures of m1 stored before the run: exit %d, want both replayed\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code, out, errOut := dlqtest.DLQRun(t, "peek", url("shared-dlq"), "--endpoint", srv.Addr, "-o", "json"); code != cmdutil.ExitOK || out != "" {
		t.Fatalf("the dead-letter subscription after the replay: exit %d, holds\n%s%s", code, out, errOut)
	}
	code, out, errOut = dlqtest.DLQRun(t, "peek", url("events-sub"), "--endpoint", srv.Addr, "-o", "json")
	if code != cmdutil.ExitOK || strings.Count(out, `"id":"m1"`) != 2 || strings.Count(out, `"id":"m2"`) != 1 {
		t.Fatalf("events-sub after the replay: exit %d, want m1 twice and m2 once\n%s%s", code, out, errOut)
	}
}

// TestDLQReplay_CopiesComingBackAreLeftCountedAndFail: a consumer beside the
// replay dead-letters every replayed copy straight back (fauxqs). The
// copies it sends back while the replay runs are left in the dead-letter
// queue, each listed ("left ID: dead-lettered again ..."), counted in the
// summary ("replayed 2, skipped 0, failed 0, left 2"; "left":2 with -o
// json), and the run does not end as if the queue were emptied: exit 1,
// saying how many are still there.
func TestDLQReplay_CopiesComingBackAreLeftCountedAndFail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			run, p, conn := dlqtest.FauxqsQueues(t, "back"+format[:1], "dlq", "dest")
			dlq, dest := "dlq-"+run, "dest-"+run
			ids := []string{"a-" + run, "b-" + run}
			for _, id := range ids {
				m := message.New(id, dest, message.MTCommand, []byte(`{}`))
				if err := p.Send(ctx, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, time.Now().Add(-time.Minute))); err != nil {
					t.Fatal(err)
				}
			}
			defer dlqtest.DeadLetterAgain(t, dest, dlq)()
			args := append([]string{"replay", "sqs://" + dlq, "--to", dest, "--yes", "--wait", "3s"}, conn...)
			if format == "json" {
				args = append(args, "-o", "json")
			}
			code, out, errOut := dlqtest.DLQRun(t, args...)
			if code != cmdutil.ExitFailure || !strings.Contains(errOut, "2 messages dead-lettered again while the replay ran; they are still in the dead-letter destination") {
				t.Fatalf("replay beside a consumer that dead-letters every copy: exit %d, want %d saying 2 were left\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitFailure, out, errOut)
			}
			for _, id := range ids {
				want := "left " + id + ": dead-lettered again while this replay ran"
				if format == "json" {
					want = `{"type":"message","id":"` + id + `","outcome":"left","error":"dead-lettered again while this replay ran`
				}
				if strings.Count(out, want) != 1 {
					t.Errorf("%s not listed left once (%q)\nstdout:\n%s", id, want, out)
				}
			}
			summary := "replayed 2, skipped 0, failed 0, left 2\n"
			if format == "json" {
				summary = `{"type":"summary","replayed":2,"skipped":0,"failed":0,"refused":0,"left":2,"dryRun":false,"interrupted":false}`
			}
			if !strings.Contains(out, summary) {
				t.Fatalf("summary, want %q\nstdout:\n%s\nstderr:\n%s", summary, out, errOut)
			}
		})
	}
}

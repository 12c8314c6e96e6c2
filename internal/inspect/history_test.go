package inspect_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// TestReplay_RecordsRetryHistory: on fauxqs, a replay records each copy
// it published in the retry history (when, the action, the id, from and
// to, who and where); a dry run records nothing; the history is read back
// per source.
func TestReplay_RecordsRetryHistory(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dest, dlq := uniq("hist-dest"), uniq("hist-dlq")
	makeQueues(t, c, dest, dlq, false)
	for _, id := range []string{"h1", "h2"} {
		deadLetter(t, c, dlq, id, dest, message.Rejection{Reason: message.ReasonDeliveryError, Description: "timed out"}, 3, false, "")
	}
	path := filepath.Join(t.TempDir(), "retries.jsonl")
	h := inspect.NewRetryHistory(path, "ana", "ops1")
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})

	sum, err := inspect.Replay(context.Background(), source(reader(t, c, dlq, false), dlq), dlq, p, inspect.Filter{}, inspect.ReplayOptions{DryRun: true, History: h})
	if err != nil || sum.Replayed != 2 {
		t.Fatalf("dry run: %+v, %v", sum, err)
	}
	if rs, err := inspect.ReadRetryHistory(path, ""); err != nil || len(rs) != 0 {
		t.Fatalf("a dry run recorded %v (%v)", rs, err)
	}
	sum, err = inspect.Replay(context.Background(), source(reader(t, c, dlq, false), dlq), dlq, p, inspect.Filter{IDs: []string{"h1"}}, inspect.ReplayOptions{History: h})
	if err != nil || sum.Replayed != 1 {
		t.Fatalf("replay: %+v, %v", sum, err)
	}
	rs, err := inspect.ReadRetryHistory(path, "sqs://"+dlq)
	if err != nil || len(rs) != 1 {
		t.Fatalf("history of %s: %v (%v), want h1's replay", dlq, rs, err)
	}
	if r := rs[0]; r.ID != "h1" || r.Action != "replay" || r.To != dest || r.From != "sqs://"+dlq || r.User != "ana" || r.Host != "ops1" || r.At.IsZero() {
		t.Errorf("record %+v", r)
	}
	if rs, _ := inspect.ReadRetryHistory(path, "sqs://another"); len(rs) != 0 {
		t.Errorf("another source's history: %v", rs)
	}
}

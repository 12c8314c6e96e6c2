package inspect_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

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
	h := inspect.NewRetryHistory(path, "ana", "ops1", emulatorEndpoint)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})

	sum, err := inspect.Replay(context.Background(), source(reader(t, c, dlq, false), dlq), dlq, p, inspect.Filter{}, inspect.ReplayOptions{DryRun: true, History: h})
	if err != nil || sum.Replayed != 2 {
		t.Fatalf("dry run: %+v, %v", sum, err)
	}
	if rs, err := inspect.ReadRetryHistory(path, nil); err != nil || len(rs) != 0 {
		t.Fatalf("a dry run recorded %v (%v)", rs, err)
	}
	sum, err = inspect.Replay(context.Background(), source(reader(t, c, dlq, false), dlq), dlq, p, inspect.Filter{IDs: []string{"h1"}}, inspect.ReplayOptions{History: h})
	if err != nil || sum.Replayed != 1 {
		t.Fatalf("replay: %+v, %v", sum, err)
	}
	rs, err := inspect.ReadRetryHistory(path, inspect.DLQHistory("sqs://"+dlq, "", emulatorEndpoint))
	if err != nil || len(rs) != 1 {
		t.Fatalf("history of %s: %v (%v), want h1's replay", dlq, rs, err)
	}
	if r := rs[0]; r.ID != "h1" || r.Action != "replay" || r.To != dest || r.From != "sqs://"+dlq || r.User != "ana" || r.Host != "ops1" || r.At.IsZero() {
		t.Errorf("record %+v", r)
	}
	if rs, _ := inspect.ReadRetryHistory(path, inspect.DLQHistory("sqs://another", "", emulatorEndpoint)); len(rs) != 0 {
		t.Errorf("another source's history: %v", rs)
	}
	if r := rs[0]; r.Endpoint != emulatorEndpoint {
		t.Errorf("record %+v names endpoint %q, want %q", r, r.Endpoint, emulatorEndpoint)
	}
	// The queue of the same name elsewhere (production) has none of the
	// emulator's history.
	if rs, _ := inspect.ReadRetryHistory(path, inspect.DLQHistory("sqs://"+dlq, "", "aws:us-east-1")); len(rs) != 0 {
		t.Errorf("the same queue name on another endpoint sees the emulator's history: %v", rs)
	}
}

// TestRestore_RecordsRestoresInHistory: on fauxqs, a restore wrapped by
// RecordRestores records each record it published as a restore (from the
// archive file, to the destination, who and where) and nothing for a
// record whose publish failed; the dead-letter destination's history
// (DLQHistory) holds the restores into it beside its replays, and a
// restore is no retry: RetryStatus looks past it to the last replay.
func TestRestore_RecordsRestoresInHistory(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dlq := uniq("hist-restore-dlq")
	makeQueues(t, c, dlq, "", false)
	path := filepath.Join(t.TempDir(), "retries.jsonl")
	h := inspect.NewRetryHistory(path, "ana", "ops1", emulatorEndpoint)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	ms := restoreSet(3, "")
	at := time.Date(2026, 12, 5, 13, 0, 0, 0, time.UTC)
	var told []string
	done := inspect.RecordRestores(context.Background(), h, "/var/archive.jsonl", dlq, func() time.Time { return at }, discardLogger(), func(id string, err error) {
		if err != nil {
			t.Errorf("restore %s: %v", id, err)
		}
		told = append(told, id)
	})
	if rs, err := inspect.Restore(context.Background(), p, ms, dlq, discardLogger(), done); err != nil || rs.Restored != 3 {
		t.Fatalf("restore: %+v %v", rs, err)
	}
	if len(told) != 3 {
		t.Fatalf("the wrapped callback heard %v, want 3 ids", told)
	}
	// A destination that does not exist: every publish fails, nothing is
	// recorded.
	failed := inspect.RecordRestores(context.Background(), h, "/var/archive.jsonl", uniq("hist-restore-missing"), time.Now, discardLogger(), nil)
	if rs, _ := inspect.Restore(context.Background(), p, ms[:1], uniq("hist-restore-missing"), discardLogger(), failed); rs.Failed != 1 {
		t.Fatalf("restore to a missing queue: %+v, want 1 failed", rs)
	}
	all, err := inspect.ReadRetryHistory(path, nil)
	if err != nil || len(all) != 3 {
		t.Fatalf("history: %v (%v), want the 3 restores only", all, err)
	}
	for i, r := range all {
		if r.ID != ms[i].Header.MessageID || !r.IsRestore() || r.From != "/var/archive.jsonl" || r.To != dlq || !r.At.Equal(at) || r.User != "ana" || r.Host != "ops1" {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	// The dead-letter destination's history: its replays and the restores
	// into it; another destination's restores are not its.
	replay := inspect.Retry{At: at.Add(-time.Hour), Action: "replay", ID: ms[0].Header.MessageID, From: "sqs://" + dlq, To: "orders"}
	if err := h.Record(replay); err != nil {
		t.Fatal(err)
	}
	mine, err := inspect.ReadRetryHistory(path, inspect.DLQHistory("sqs://"+dlq, dlq, emulatorEndpoint))
	if err != nil || len(mine) != 4 {
		t.Fatalf("the DLQ's history: %v (%v), want 3 restores and 1 replay", mine, err)
	}
	if other, _ := inspect.ReadRetryHistory(path, inspect.DLQHistory("sqs://"+dlq, "another-dlq", emulatorEndpoint)); len(other) != 1 || other[0].IsRestore() {
		t.Fatalf("restores into another destination counted: %v", other)
	}
	if prod, _ := inspect.ReadRetryHistory(path, inspect.DLQHistory("sqs://"+dlq, dlq, "aws:us-east-1")); len(prod) != 0 {
		t.Fatalf("restores and replays on the emulator counted for the same queue name on another endpoint: %v", prod)
	}
	// r00: replayed an hour before at, restored at at. The restore is no
	// retry: the replay is the last retry, settled (10 minutes settle).
	var r00 []inspect.Retry
	for _, r := range mine {
		if r.ID == ms[0].Header.MessageID {
			r00 = append(r00, r)
		}
	}
	if st := inspect.RetryStatus(r00, nil, at.Add(time.Minute), 10*time.Minute); st != inspect.RetrySettled {
		t.Errorf("status after a replay then a restore: %v, want settled (the replay's)", st)
	}
	if st := inspect.RetryStatus(mine[:1], nil, at, time.Hour); st != 0 {
		t.Errorf("status of a restore alone: %v, want none (no retry)", st)
	}
}

// emulatorEndpoint is the endpoint the tests' histories are stamped with
// (an emulator's, as transport.Target.Endpoint names it).
const emulatorEndpoint = "http://127.0.0.1:4566"

package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// historyActions are fakeActions with a retry history.
type historyActions struct {
	*fakeActions
	retries []inspect.Retry
}

func (h *historyActions) Retries() ([]inspect.Retry, error) { return h.retries, nil }

// TestTriageShowsRetryHistory: a message replayed twice that came back is
// marked "×2 failed again" in the list, its view lists both replays (when,
// to where, by whom) and says it failed again; a message replayed and not
// back within the settle period is settled; one replayed a minute ago and
// not back counts as a pending retry in the header.
func TestTriageShowsRetryHistory(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{
		rejected("back", "orders", "timeout", `{}`, now.Add(-time.Minute)),
		rejected("kept", "orders", "timeout", `{}`, now.Add(-3*time.Hour)),
	}}
	h := &historyActions{fakeActions: f, retries: []inspect.Retry{
		{At: now.Add(-10 * time.Minute), Action: "replay", ID: "back", From: "sqs://orders-dlq", To: "orders", User: "ana", Host: "ops1"},
		{At: now.Add(-5 * time.Minute), Action: "edit", ID: "back", From: "sqs://orders-dlq", To: "orders", User: "ben", Host: "ops2"},
		{At: now.Add(-2 * time.Hour), Action: "replay", ID: "kept", From: "sqs://orders-dlq", To: "orders-staging", User: "ana"},
		{At: now.Add(-time.Minute), Action: "replay", ID: "gone", From: "sqs://orders-dlq", To: "orders", User: "ana"},
	}}
	m := New(context.Background(), h, func() time.Time { return now }).WithMessages(f.msgs)
	s := checkScreen(t, m)
	if !strings.Contains(s, "retries: 1 pending, 1 failed again") {
		t.Errorf("the header does not count the pending retries:\n%s", s)
	}
	m = press(t, m, "enter")
	s = checkScreen(t, m)
	if !strings.Contains(s, "RETRIED") || !strings.Contains(s, "×2 failed again") || !strings.Contains(s, "×1 settled") {
		t.Errorf("the list does not mark the retried messages:\n%s", s)
	}
	m = press(t, m, "enter")
	s = flat(checkScreen(t, m))
	for _, want := range []string{"message back", "retry history (2)", "2026-12-04T09:50:00Z replay to orders by ana@ops1 (10m ago)",
		"2026-12-04T09:55:00Z edit to orders by ben@ops2 (5m ago)", "failed again: dead-lettered again after the last retry"} {
		if !strings.Contains(s, want) {
			t.Errorf("the message view lacks %q:\n%s", want, s)
		}
	}
	// a refresh re-reads the history: the pending one came back
	h.retries = h.retries[:3]
	m = press(t, m, "esc", "esc")
	m.refresh = 0
	m = run(t, m, m.load()())
	if s := checkScreen(t, m); strings.Contains(s, "1 pending") {
		t.Errorf("a re-read kept the old history:\n%s", s)
	}
}

// TestRetryStatus: the last retry decides; a copy rejected after it is a
// failure again, whatever the settle period.
func TestRetryStatus(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	rs := []inspect.Retry{{At: now.Add(-20 * time.Minute), ID: "x"}, {At: now.Add(-2 * time.Minute), ID: "x"}}
	before := rejected("x", "orders", "timeout", `{}`, now.Add(-10*time.Minute))
	after := rejected("x", "orders", "timeout", `{}`, now.Add(-time.Minute))
	for _, c := range []struct {
		ms   []*message.Message
		want inspect.RetryState
	}{
		{nil, inspect.RetryPending},
		{[]*message.Message{before}, inspect.RetryPending},
		{[]*message.Message{before, after}, inspect.RetryFailedAgain},
	} {
		if got := inspect.RetryStatus(rs, c.ms, now, 15*time.Minute); got != c.want {
			t.Errorf("RetryStatus with %d copies = %v, want %v", len(c.ms), got, c.want)
		}
	}
	if got := inspect.RetryStatus(rs, nil, now.Add(time.Hour), 15*time.Minute); got != inspect.RetrySettled {
		t.Errorf("an hour later = %v, want settled", got)
	}
}

// TestTriageHistoryListsRestoresAsNoRetry: a restore from an archive file
// is in the message view's history (from the file, to the destination, by
// whom) but is no retry: it is not counted in RETRIED, is never pending
// nor failed again, and an id only restored is marked "restored".
func TestTriageHistoryListsRestoresAsNoRetry(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{
		rejected("both", "orders", "timeout", `{}`, now.Add(-3*time.Hour)),
		rejected("only", "orders", "timeout", `{}`, now.Add(-3*time.Hour)),
	}}
	h := &historyActions{fakeActions: f, retries: []inspect.Retry{
		{At: now.Add(-2 * time.Hour), Action: "replay", ID: "both", From: "sqs://orders-dlq", To: "orders", User: "ana"},
		{At: now.Add(-time.Minute), Action: inspect.ActionRestore, ID: "both", From: "/var/archive.jsonl", To: "orders-dlq", User: "ben", Host: "ops2"},
		{At: now.Add(-time.Minute), Action: inspect.ActionRestore, ID: "only", From: "/var/archive.jsonl", To: "orders-dlq", User: "ben", Host: "ops2"},
	}}
	m := New(context.Background(), h, func() time.Time { return now }).WithMessages(f.msgs)
	if s := checkScreen(t, m); strings.Contains(s, "pending") || strings.Contains(s, "failed again") {
		t.Errorf("a restore was judged as a retry:\n%s", s)
	}
	m = press(t, m, "enter")
	s := checkScreen(t, m)
	if !strings.Contains(s, "×1 settled") || !strings.Contains(s, "restored") || strings.Contains(s, "×2") {
		t.Errorf("the list counts restores as retries or misses them:\n%s", s)
	}
	m = press(t, m, "enter")
	s = flat(checkScreen(t, m))
	for _, want := range []string{"retry history (1), 1 restore", "2026-12-04T09:59:00Z restore from /var/archive.jsonl to orders-dlq by ben@ops2 (1m ago)",
		"replay to orders by ana", "settled: not back within"} {
		if !strings.Contains(s, want) {
			t.Errorf("the message view lacks %q:\n%s", want, s)
		}
	}
}

// TestTriageArchivedViewJudgesRetriesOnTheDeadLetters: the archived view's
// header counts pending and failed-again retries as the dead letters' view
// does, judged on the dead-letter destination's last read, not on the
// archive file's records it shows.
func TestTriageArchivedViewJudgesRetriesOnTheDeadLetters(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{rejected("back", "orders", "timeout", `{}`, now.Add(-time.Minute))}}
	h := &historyActions{fakeActions: f, retries: []inspect.Retry{
		{At: now.Add(-5 * time.Minute), Action: "replay", ID: "back", From: "sqs://orders-dlq", To: "orders"},
	}}
	a := &archivedHistory{historyActions: h, file: []*message.Message{rejected("old", "audit", "bad audit record", `{}`, now.Add(-48*time.Hour))}}
	m := New(context.Background(), a, func() time.Time { return now }).WithMessages(f.msgs)
	m.setRetries(h.retries)
	if s := checkScreen(t, m); !strings.Contains(s, "retries: 0 pending, 1 failed again") {
		t.Fatalf("the dead letters' header:\n%s", s)
	}
	m = press(t, m, "A")
	if s := checkScreen(t, m); !strings.Contains(s, "ARCHIVED") || !strings.Contains(s, "retries: 0 pending, 1") {
		t.Errorf("the archived view's header judges the retries otherwise:\n%s", s)
	}
}

// archivedHistory is Actions with a retry history and an archive file.
type archivedHistory struct {
	*historyActions
	file []*message.Message
}

func (a *archivedHistory) Archived() ([]*message.Message, error) { return a.file, nil }

package triage

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// TestTriageShowsStoredCopiesOfAnID: an id stored twice (restored twice,
// dead-lettered twice) is marked ×2 on each of its rows in the messages
// list and the message view says how many copies there are; an id stored
// once is not marked.
func TestTriageShowsStoredCopiesOfAnID(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	dup := rejected("twice", "orders", "timeout", `{}`, now.Add(-time.Minute))
	f := &fakeActions{msgs: []*message.Message{dup, dup.Clone(), rejected("once", "orders", "timeout", `{}`, now.Add(-2*time.Minute))}}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(f.msgs)
	m = press(t, m, "enter")
	s := checkScreen(t, m)
	if strings.Count(s, "twice ×2") != 2 {
		t.Errorf("the two copies of 'twice' are not each marked ×2:\n%s", s)
	}
	if strings.Contains(s, "once ×") {
		t.Errorf("an id stored once is marked:\n%s", s)
	}
	m = press(t, m, "enter")
	if s = checkScreen(t, m); !strings.Contains(flat(s), "2 stored copies of this id (×2)") {
		t.Errorf("the message view does not count the copies:\n%s", s)
	}
	m = press(t, m, "esc", "down", "down", "enter")
	if s = checkScreen(t, m); !strings.Contains(s, "message once") || strings.Contains(s, "stored copies") {
		t.Errorf("the view of an id stored once:\n%s", s)
	}
}

// TestTriageActsOnEveryCopyOfAnID: a or r on one row of an id stored
// twice (in the list and in the message view) asks about both copies and
// hands both to the action, so that an archive leaves no copy behind; an
// id stored once is acted on alone.
func TestTriageActsOnEveryCopyOfAnID(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	dup := rejected("twice", "orders", "timeout", `{}`, now.Add(-time.Minute))
	f := &fakeActions{msgs: []*message.Message{dup, dup.Clone(), rejected("once", "orders", "timeout", `{}`, now.Add(-2*time.Minute))}}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(f.msgs)
	m = press(t, m, "enter", "a")
	if s := flat(checkScreen(t, m)); !strings.Contains(s, "Archive 2 messages") || !strings.Contains(s, "twice ×2") {
		t.Fatalf("the archive prompt on one row of an id stored twice:\n%s", s)
	}
	m = press(t, m, "y")
	if len(f.archived) != 1 || !slices.Equal(f.archived[0], []string{"twice", "twice"}) {
		t.Fatalf("archived %v, want both copies of twice", f.archived)
	}
	m = press(t, m, "enter", "r")
	if s := flat(checkScreen(t, m)); !strings.Contains(s, "Replay 2 messages") {
		t.Fatalf("the replay prompt in the message view of an id stored twice:\n%s", s)
	}
	press(t, m, "n", "esc", "down", "down", "a", "y")
	if len(f.archived) != 2 || !slices.Equal(f.archived[1], []string{"once"}) {
		t.Fatalf("archived %v, want once alone", f.archived)
	}
}

// TestTriagePromptNamesTheGroupOnce: r on the groups screen asks about
// "group <id>", not "the group of group <id>".
func TestTriagePromptNamesTheGroupOnce(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{rejected("one", "orders", "timeout", `{}`, now.Add(-time.Minute))}}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(f.msgs)
	m = press(t, m, "r")
	if s := flat(checkScreen(t, m)); !strings.Contains(s, "Replay 1 message (group ") || strings.Contains(s, "the group of group") {
		t.Errorf("the replay prompt on the groups screen:\n%s", s)
	}
}

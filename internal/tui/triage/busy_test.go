package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// blockedActions is fakeActions whose Replay waits for release: an action
// that is still running.
type blockedActions struct {
	fakeActions
	release chan struct{}
}

func (b *blockedActions) Replay(ctx context.Context, ids []string, dry bool, p func(Outcome)) (Result, error) {
	<-b.release
	return b.fakeActions.Replay(ctx, ids, dry, p)
}

// TestTriageOneActionAtATime: while a replay runs, a key that would start
// another action (a, r, R, e) starts nothing and the status line says an
// action is running; an edit whose editor ends meanwhile is not replayed on
// y (its files are closed, nothing is sent); once the replay has finished,
// the next action runs.
func TestTriageOneActionAtATime(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	ed := &fakeEdit{}
	f := &blockedActions{fakeActions: fakeActions{msgs: []*message.Message{
		rejected("t1", "orders", "timeout", `{"a":1}`, now.Add(-time.Hour)),
		rejected("t2", "orders", "timeout", `{"a":2}`, now.Add(-time.Minute)),
	}, edit: ed}, release: make(chan struct{})}
	m, running := replaying(t, context.Background(), f, now)
	for _, k := range []string{"a", "R", "r", "e"} {
		m = press(t, m, k)
		if m.ask != nil {
			t.Fatalf("%s while a replay runs asks %q: a second action would start", k, m.ask.prompt)
		}
		if s := flat(checkScreen(t, m)); !strings.Contains(s, "replay is running: one action at a time") {
			t.Errorf("%s while a replay runs: the status line does not say why nothing starts:\n%s", k, s)
		}
		m = press(t, m, "y")
	}
	m = run(t, m, Edited("t2", ed, nil))
	m = press(t, m, "y")
	if ed.finished != 0 || ed.closed != 1 {
		t.Errorf("an edit confirmed while a replay runs: finished %d, closed %d; want nothing sent and its files closed", ed.finished, ed.closed)
	}
	if s := flat(checkScreen(t, m)); !strings.Contains(s, "replay is running: one action at a time") {
		t.Errorf("an edit confirmed while a replay runs: the status line does not say why nothing starts:\n%s", s)
	}
	if len(f.archived) != 0 || len(f.replayed) != 0 {
		t.Fatalf("while the first replay ran: archived %v, replayed %v; want nothing else started", f.archived, f.replayed)
	}
	close(f.release)
	m = run(t, m, running())
	if m.busy != "" || len(f.replayed) != 1 {
		t.Fatalf("after the replay: busy %q, replayed %v", m.busy, f.replayed)
	}
	m = press(t, m, "a", "y")
	if len(f.archived) != 1 {
		t.Errorf("a after the replay finished: archived %v, want one archive", f.archived)
	}
}

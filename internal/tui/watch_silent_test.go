package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/faultproxy"
)

// TestWatch_TargetThatNeverAnswersIsUnreachableAndRetried follows a
// target that accepts connections and never answers (not even the
// response headers of /events) with the client watch uses: within
// HeaderTimeout and a margin the target is reported unreachable with the
// reason (no answer within HeaderTimeout), and Watch keeps retrying (the
// second attempt is reported as attempt 2, as unreachable as the first).
func TestWatch_TargetThatNeverAnswersIsUnreachableAndRetried(t *testing.T) {
	silent := faultproxy.NewSilent(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	statuses := make(chan TargetStatusMsg, 16)
	target := silent.URL
	b := NewBatcher(0, 0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Watch(ctx, NewWatchClient(), target, b, func(m tea.Msg) {
			if s, ok := m.(TargetStatusMsg); ok {
				statuses <- s
			}
		})
	}()
	defer func() { cancel(); <-done }()
	start := time.Now()
	for attempt := 1; attempt <= 2; attempt++ {
		select {
		case s := <-statuses:
			if s.Connected || s.Err == nil {
				t.Fatalf("attempt %d: a target that never answers reported %+v, want unreachable", attempt, s)
			}
			if want := "no answer within " + HeaderTimeout.String(); !strings.Contains(s.Err.Error(), want) {
				t.Errorf("attempt %d: the reason %q does not say %q", attempt, s.Err, want)
			}
			if s.Attempt != attempt || s.RetryIn <= 0 {
				t.Errorf("status %+v, want attempt %d with a retry scheduled", s, attempt)
			}
		case <-time.After(HeaderTimeout + MaxRetry + 5*time.Second):
			t.Fatalf("no status %v after the start (attempt %d): the target that never answers is still waited on", time.Since(start), attempt)
		}
	}
}

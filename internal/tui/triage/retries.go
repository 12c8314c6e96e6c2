package triage

import (
	"fmt"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// The retry history as the console shows it: per message the replays and
// edits recorded (when, to where, by whom), and where the last one stands:
// pending (replayed less than --settle ago and not back), failed again (a
// copy rejected after it is in the destination) or settled (not back
// within --settle).

// setRetries keeps rs by message id.
func (m *Model) setRetries(rs []inspect.Retry) {
	m.retries = map[string][]inspect.Retry{}
	for _, r := range rs {
		m.retries[r.ID] = append(m.retries[r.ID], r)
	}
}

// retryState is where the last retry of id stands (0: never retried).
func (m Model) retryState(id string) inspect.RetryState {
	return inspect.RetryStatus(m.retries[id], m.all, m.now(), m.settle)
}

// retryCell is the messages list's RETRIED cell of id: how many retries
// and where the last stands ("×2 failed again"), "" for none.
func (m Model) retryCell(id string) string {
	rs := m.retries[id]
	if len(rs) == 0 {
		return ""
	}
	return fmt.Sprintf("×%d %s", len(rs), m.retryState(id))
}

// pendingRetries counts the retried messages of the history whose last
// retry is pending and those that failed again.
func (m Model) pendingRetries() (pending, failedAgain int) {
	for id := range m.retries {
		switch m.retryState(id) {
		case inspect.RetryPending:
			pending++
		case inspect.RetryFailedAgain:
			failedAgain++
		}
	}
	return pending, failedAgain
}

// historyLines is the message view's retry history of x: a line a retry,
// then where the last stands.
func (m Model) historyLines(x *message.Message) []string {
	rs := m.retries[x.Header.MessageID]
	if len(rs) == 0 {
		return nil
	}
	lines := []string{fmt.Sprintf("retry history (%d)", len(rs))}
	for _, r := range rs {
		who := r.User
		if r.Host != "" {
			who += "@" + r.Host
		}
		lines = append(lines, fmt.Sprintf("  %s %s to %s by %s (%s)", wireTime(r.At), r.Action, r.To, who, m.ago(r.At)))
	}
	switch m.retryState(x.Header.MessageID) {
	case inspect.RetryPending:
		lines = append(lines, fmt.Sprintf("  pending: not back since the last retry; settled %s after it if it stays away", m.settle))
	case inspect.RetryFailedAgain:
		lines = append(lines, "  failed again: dead-lettered again after the last retry")
	case inspect.RetrySettled:
		lines = append(lines, fmt.Sprintf("  settled: not back within %s of the last retry", m.settle))
	}
	return lines
}

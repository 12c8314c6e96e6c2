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
// within --settle). Restores from an archive file into the dead-letter
// destination are in the history too, but are no retry: they are listed,
// never counted as retries nor judged pending or failed again.

// setRetries keeps rs by message id.
func (m *Model) setRetries(rs []inspect.Retry) {
	m.retries = map[string][]inspect.Retry{}
	for _, r := range rs {
		m.retries[r.ID] = append(m.retries[r.ID], r)
	}
}

// retryState is where the last retry of id stands (0: never retried),
// judged on the dead-letter destination's last read: in the archived view
// too, whose screens show the archive file's records instead.
func (m Model) retryState(id string) inspect.RetryState {
	dlq := m.all
	if m.archived {
		dlq = m.live
	}
	return inspect.RetryStatus(m.retries[id], dlq, m.now(), m.settle)
}

// retryCell is the messages list's RETRIED cell of id: how many retries
// and where the last stands ("×2 failed again"); "restored" for an id
// only restored from an archive; "" for none.
func (m Model) retryCell(id string) string {
	n := 0
	for _, r := range m.retries[id] {
		if !r.IsRestore() {
			n++
		}
	}
	switch {
	case n > 0:
		return fmt.Sprintf("×%d %s", n, m.retryState(id))
	case len(m.retries[id]) > 0:
		return "restored"
	}
	return ""
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

// historyLines is the message view's retry history of x: a line a retry
// or restore, then where the last retry stands.
func (m Model) historyLines(x *message.Message) []string {
	rs := m.retries[x.Header.MessageID]
	if len(rs) == 0 {
		return nil
	}
	restores := 0
	for _, r := range rs {
		if r.IsRestore() {
			restores++
		}
	}
	head := fmt.Sprintf("retry history (%d)", len(rs)-restores)
	switch {
	case restores == 0:
	case len(rs) == restores:
		head = "history: " + plural(restores, "restore")
	default:
		head += ", " + plural(restores, "restore")
	}
	lines := []string{head}
	for _, r := range rs {
		who := r.User
		if r.Host != "" {
			who += "@" + r.Host
		}
		if r.IsRestore() {
			lines = append(lines, fmt.Sprintf("  %s restore from %s to %s by %s (%s)", wireTime(r.At), r.From, r.To, who, m.ago(r.At)))
			continue
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

// plural is "1 restore", "2 restores".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

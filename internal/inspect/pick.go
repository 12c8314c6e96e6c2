package inspect

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// Pick scans src (removing nothing; every message read is released when the
// scan ends) and returns the ids of the n messages f selects (f.Limit is
// ignored) that were rejected first: by rejection time, oldest first (a
// message without one last), then by id. It makes --limit choose the same
// messages whichever order the broker hands them out in, so a dry run and
// the run after it pick alike. Every copy of a picked id is the caller's to
// act on (Filter.IDs). Memory grows with 4n ids at most. Its error is Scan's.
func Pick(ctx context.Context, src *Source, f Filter, n int) ([]string, error) {
	type cand struct {
		at time.Time
		id string
	}
	order := func(a, b cand) int {
		switch {
		case a.at.IsZero() != b.at.IsZero():
			if a.at.IsZero() {
				return 1
			}
			return -1
		case !a.at.Equal(b.at):
			return a.at.Compare(b.at)
		}
		return cmp.Compare(a.id, b.id)
	}
	var cs []cand
	trim := func() {
		slices.SortFunc(cs, order)
		seen := make(map[string]bool, len(cs))
		cs = slices.DeleteFunc(cs, func(c cand) bool {
			dup := seen[c.id]
			seen[c.id] = true
			return dup
		})
		if len(cs) > n {
			cs = cs[:n]
		}
	}
	f.Limit = 0
	_, err := Scan(ctx, src, f, func(_ context.Context, m *message.Message) (bool, error) {
		cs = append(cs, cand{Describe(m).RejectedAt, m.Header.MessageID})
		if len(cs) >= 4*n {
			trim()
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	trim()
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.id
	}
	return ids, nil
}

package inspect

import (
	"context"

	"github.com/brightergo/brighter/internal/message"
)

// AlreadyThere scans src (removing nothing; every message read is released
// when the scan ends) and returns, for each id of ms that src already holds,
// how many stored copies of it src holds: what a restore of ms into src
// would duplicate. Memory grows with the ids of ms. Its error is Scan's.
func AlreadyThere(ctx context.Context, src *Source, ms []*message.Message) (map[string]int, error) {
	want := make(map[string]struct{}, len(ms))
	for _, m := range ms {
		want[m.Header.MessageID] = struct{}{}
	}
	there := map[string]int{}
	if len(want) == 0 {
		return there, nil
	}
	_, err := Scan(ctx, src, Filter{}, func(_ context.Context, m *message.Message) (bool, error) {
		if _, ok := want[m.Header.MessageID]; ok {
			there[m.Header.MessageID]++
		}
		return false, nil
	})
	return there, err
}

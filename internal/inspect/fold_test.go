package inspect_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// TestTablesShowWhatTellsCausesApart: three handlers whose rejection
// messages share the redelivery budget's long prefix are told apart in the
// dlq stats and dlq peek tables: the shared prefix is folded to "…" and
// each row shows its last error; a cause that fits its column is shown
// whole.
func TestTablesShowWhatTellsCausesApart(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	const prefix = "redelivery budget exhausted: delivery count 5 reached requeueCount 5 (delivered 5 times, handled 5 times in this process); last error: "
	ms := []*message.Message{
		routed("p1", "payments", message.ReasonDeliveryError, prefix+"card declined", now.Add(-time.Minute)),
		routed("s1", "shipping", message.ReasonDeliveryError, prefix+"carrier down", now.Add(-time.Minute)),
		routed("i1", "stock", message.ReasonDeliveryError, prefix+"row locked", now.Add(-time.Minute)),
		routed("n1", "orders", message.ReasonDeliveryError, "order has no customer", now.Add(-time.Minute)),
	}
	var stats bytes.Buffer
	if err := inspect.CollectMessages(ms, inspect.Filter{}).WriteTable(&stats, false, now); err != nil {
		t.Fatal(err)
	}
	var peek bytes.Buffer
	tb := inspect.NewTable(&peek, false, func() time.Time { return now })
	for _, m := range ms {
		if err := tb.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"stats": stats.String(), "peek": peek.String()} {
		for _, want := range []string{"…card declined", "…carrier down", "…row locked", "order has no customer"} {
			if !strings.Contains(out, want) {
				t.Errorf("the %s table lacks %q:\n%s", name, want, out)
			}
		}
	}
	if got := inspect.FoldShared([]string{"abc", "abd"}, 0); got[0] != "abc" {
		t.Errorf("a prefix shorter than the fold's minimum was folded: %q", got)
	}
}

package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/observe"
)

// A released record (a message a stop released unstarted) shows its
// message as released and settled, and moves neither the received count
// nor the in-flight count: it never reached a handler. The screen still
// fits its size.
func TestModel_ReleasedRecordShowsTheMessageReleased(t *testing.T) {
	m := feed(newTestModel("a"), poisonRun())
	st := m.(Model).state
	before := st.sub("orders").counts
	m = feed(m, []observe.Record{
		{Kind: "released", Time: t0.Add(time.Second), Subscription: "orders", MessageID: "buffered-1", DeliveryCount: 2, Budget: 3},
	})
	mm := m.(Model)
	st = mm.state
	if after := st.sub("orders").counts; after != before {
		t.Errorf("counts moved from %+v to %+v, want unchanged", before, after)
	}
	s := ansi.Strip(mm.Render())
	var row string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, "buffered-1") {
			row = l
		}
		if w := ansi.StringWidth(l); w > mm.width {
			t.Errorf("line %d cells wide, want at most %d: %q", w, mm.width, l)
		}
	}
	if !strings.Contains(row, " released ") || !strings.Contains(row, "2/3") {
		t.Errorf("the released message's row is %q, want it shown released at 2/3; screen:\n%s", row, s)
	}
}

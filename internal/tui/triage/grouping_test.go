package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// TestTriageGroupingKey: g cycles the grouping: by cause (three failure
// groups), by reason (the two DeliveryError causes together, Unacceptable
// apart), by original topic (orders together, audit apart), by handler
// (topic and message type: orders' command apart from its event), then
// back to cause; the header names the grouping and each screen fits.
func TestTriageGroupingKey(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	unacceptable := func(id, topic string) *message.Message {
		m := message.New(id, topic, message.MTCommand, []byte(`{}`))
		return message.Stamp(m, "orders-dlq", message.Rejection{Reason: message.ReasonUnacceptable, Description: "no customer"}, now)
	}
	f := &fakeActions{msgs: []*message.Message{
		rejected("t1", "orders", "timeout calling payments", `{}`, now.Add(-time.Minute)),
		rejected("t2", "orders", "timeout calling payments", `{}`, now.Add(-time.Minute)),
		rejected("l1", "audit", "ledger closed", `{}`, now.Add(-time.Minute)),
		unacceptable("u1", "orders"),
	}}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(f.msgs)
	for _, c := range []struct {
		by     string
		groups int
		first  int // the largest group's count
	}{
		{"cause", 3, 2},
		{"reason", 2, 3},
		{"topic", 2, 3},
		{"handler", 3, 2},
		{"cause", 3, 2},
	} {
		s := checkScreen(t, m)
		if !strings.Contains(s, "by: "+c.by) {
			t.Fatalf("the header does not name the grouping %s:\n%s", c.by, s)
		}
		if gs := m.visibleGroups(); len(gs) != c.groups || len(gs[0].msgs) != c.first {
			t.Fatalf("by %s: %d groups, the first of %d; want %d, %d:\n%s", c.by, len(gs), len(gs[0].msgs), c.groups, c.first, s)
		}
		m = press(t, m, "g")
	}
	// by topic, orders' group opens on its three messages
	m = press(t, m, "g", "enter")
	if s := checkScreen(t, m); !strings.Contains(s, "t1") || !strings.Contains(s, "u1") || strings.Contains(s, "l1") {
		t.Errorf("orders' topic group:\n%s", s)
	}
}

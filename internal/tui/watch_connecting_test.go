package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/observe"
)

// brighter watch on a consumer that opens its channels in turn: the
// connecting records of /events make a row say connected only once its
// channel is open, the one being opened connecting (for how long, from
// the record's since), the others waiting for it; the connected record
// makes every row connected. The R column keeps each budget throughout.
// With two targets the rows name the target that is connecting.
func TestModel_WatchConnectingRows(t *testing.T) {
	const target = "http://127.0.0.1:9464"
	now := t0.Add(5 * time.Second)
	o := Options{NoColor: true, Now: func() time.Time { return now }, Location: time.UTC, Tick: -1, Targets: []string{target}}
	var recs []observe.Record
	for _, n := range []string{"a-memory", "b-silent", "c-later"} {
		recs = append(recs, observe.Record{Kind: observe.KindSubscription, Subscription: n, Budget: 7, Info: &observe.SubscriptionInfo{Budget: 7}})
	}
	recs = append(recs,
		observe.Record{Kind: observe.KindConnecting, Subscription: "a-memory", Budget: 7, Since: t0.Add(-time.Second)},
		observe.Record{Kind: observe.KindConnecting, Subscription: "b-silent", Budget: 7, Since: t0, Opened: []string{"a-memory"}})
	m, _ := New(o).Update(EventsMsg{Target: target, Records: recs})
	s := ansi.Strip(m.(Model).Render())
	for name, want := range map[string]string{"a-memory": "✓ connected", "b-silent": "… connecting (for 5s)", "c-later": "· waiting to connect (after subscription b-silent)"} {
		if got := statusOf(s, name); got != want {
			t.Errorf("while b-silent connects, %s's status is %q, want %q:\n%s", name, got, want, s)
		}
	}
	if n := strings.Count(s, "   7 "); n < 3 {
		t.Errorf("while connecting, %d rows show R 7, want 3:\n%s", n, s)
	}
	m, _ = m.Update(EventsMsg{Target: target, Records: []observe.Record{{Kind: observe.KindConnected}}})
	s = ansi.Strip(m.(Model).Render())
	for _, name := range []string{"a-memory", "b-silent", "c-later"} {
		if got := statusOf(s, name); got != "✓ connected" {
			t.Errorf("after the connected record, %s's status is %q, want connected:\n%s", name, got, s)
		}
	}

	const other = "http://127.0.0.1:9465"
	o.Targets = []string{target, other}
	m = New(o)
	m, _ = m.Update(EventsMsg{Target: target, Records: recs[:3]})
	m, _ = m.Update(EventsMsg{Target: other, Records: recs})
	s = ansi.Strip(m.(Model).Render())
	if got, want := statusOf(s, "b-silent"), "… "+other+": connecting (for 5s)"; got != want {
		t.Errorf("with two targets, b-silent's status is %q, want %q:\n%s", got, want, s)
	}
}

// statusOf returns the first status line under subscription name's row.
func statusOf(screen, name string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, name+" ") && i+1 < len(lines) {
			return strings.TrimSpace(lines[i+1])
		}
	}
	return ""
}

package tui

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/observe"
)

var update = flag.Bool("update", false, "rewrite the golden screens under testdata")

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func newTestModel(targets ...string) Model {
	return New(Options{Targets: targets, NoColor: true, Now: func() time.Time { return t0.Add(5 * time.Second) }, Location: time.UTC, Tick: -1})
}

// poisonRun is a poison message deferred to its budget of 3 and rejected,
// an acked message, an unacceptable one, and one still in flight.
func poisonRun() []observe.Record {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	detail := &observe.MessageDetail{Topic: "orders", MessageType: "MT_COMMAND", CorrelationID: "corr-1", ContentType: "application/json",
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", BodyPreview: `{"poison":true}`, BodySize: 15,
		Bag: map[string]any{"tenant": "acme"}}
	recs := []observe.Record{
		{Kind: observe.KindSubscription, Subscription: "orders", Budget: 3, Info: &observe.SubscriptionInfo{Transport: "sqs", Budget: 3, NativeLimit: 5, EffectiveLimit: 3, DeadLetter: "orders-dlq"}},
		{Kind: observe.KindDLQDepth, Subscription: "orders", Depth: 7},
		{Kind: "received", Time: at(0), Subscription: "orders", MessageID: "good-1", Budget: 3},
		{Kind: "acknowledged", Time: at(5), Subscription: "orders", MessageID: "good-1", Budget: 3, Outcome: "ack", DurationMS: 4},
	}
	for i := 0; i < 3; i++ {
		recs = append(recs, observe.Record{Kind: "received", Time: at(100 + i*100), Subscription: "orders", MessageID: "poison-1", DeliveryCount: i, Budget: 3, Message: detail})
		if i < 2 {
			recs = append(recs, observe.Record{Kind: "deferred", Time: at(110 + i*100), Subscription: "orders", MessageID: "poison-1", DeliveryCount: i + 1, Budget: 3, Outcome: "defer", DelayMS: 100})
		}
	}
	recs = append(recs,
		observe.Record{Kind: "budget-exhausted", Time: at(310), Subscription: "orders", MessageID: "poison-1", DeliveryCount: 3, Budget: 3, Outcome: "defer"},
		observe.Record{Kind: "rejected", Time: at(311), Subscription: "orders", MessageID: "poison-1", DeliveryCount: 3, Budget: 3, Outcome: "defer",
			Reason: "DeliveryError", Route: "dead-letter", Destination: "orders-dlq", Description: "redelivery budget exhausted: delivery count 3 reached requeueCount 3", Message: detail},
		observe.Record{Kind: "received", Time: at(400), Subscription: "payments", MessageID: "bad-1", Budget: -1},
		observe.Record{Kind: "rejected", Time: at(401), Subscription: "payments", MessageID: "bad-1", Budget: -1, Outcome: "unacceptable",
			Reason: "Unacceptable", Route: "invalid-message", Destination: "payments-invalid"},
		observe.Record{Kind: "received", Time: at(500), Subscription: "payments", MessageID: "slow-1", DeliveryCount: 1, Budget: -1},
	)
	return recs
}

func press(m tea.Model, keys ...string) tea.Model {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		m, _ = m.Update(msg)
	}
	return m
}

func feed(m tea.Model, recs []observe.Record) tea.Model {
	m, _ = m.Update(EventsMsg{Records: recs})
	return m
}

// golden compares the screen (ANSI stripped) with testdata/name.golden and
// checks it fits the model's size.
func golden(t *testing.T, name string, m tea.Model) string {
	t.Helper()
	mm := m.(Model)
	screen := ansi.Strip(mm.Render())
	lines := strings.Split(screen, "\n")
	if len(lines) > mm.height {
		t.Errorf("%s: %d lines, want at most %d", name, len(lines), mm.height)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > mm.width {
			t.Errorf("%s: line %d is %d cells wide, want at most %d: %q", name, i+1, w, mm.width, l)
		}
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(screen+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if got := screen + "\n"; got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
	return screen
}

func TestModel_Panels_Golden(t *testing.T) {
	m := feed(newTestModel(), poisonRun())
	s := golden(t, "panels_80x24", m)
	for _, want := range []string{"orders", "███████ 3/3", "DeliveryError", "dead-letter", "orders-dlq", "invalid-message", "in flight", "7"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
}

func TestModel_Keys_Golden(t *testing.T) {
	base := func() tea.Model { return feed(newTestModel(), poisonRun()) }
	cases := []struct {
		name string
		keys []string
		want string
	}{
		{"key_sort_count", []string{"s"}, "sort: count"},
		{"key_sort_id", []string{"s", "s"}, "sort: id"},
		{"key_filter", append(append([]string{"/"}, strings.Split("poison", "")...), "enter"), "filter: poison"},
		{"key_filter_typing", append([]string{"/"}, strings.Split("pay", "")...), "/pay"},
		{"key_filter_nomatch", append(append([]string{"/"}, strings.Split("zzz", "")...), "enter"), `no subscription matches the filter "zzz"`},
		{"key_details_message", []string{"down", "down", "enter"}, "bag.tenant"},
		{"key_details_rejection", []string{"tab", "down", "enter"}, "redelivery budget exhausted"},
		{"key_help", []string{"?"}, "KEYS"},
		{"key_help_closed", []string{"?", "esc"}, "SUBSCRIPTIONS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := golden(t, c.name, press(base(), c.keys...))
			if !strings.Contains(s, c.want) {
				t.Errorf("screen lacks %q", c.want)
			}
		})
	}
}

func TestModel_Pause_HoldsEventsUntilResumed(t *testing.T) {
	recs := poisonRun()
	m := press(feed(newTestModel(), recs[:4]), "p")
	m = feed(m, recs[4:])
	s := golden(t, "key_pause", m)
	if !strings.Contains(s, "PAUSED (") || strings.Contains(s, "poison-1") {
		t.Fatalf("paused screen should hold the new events back:\n%s", s)
	}
	m = press(m, "p")
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, "poison-1") || strings.Contains(s, "PAUSED") {
		t.Fatalf("resumed screen should show the held events:\n%s", s)
	}
}

func TestModel_Quit(t *testing.T) {
	_, cmd := newTestModel().Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if cmd == nil {
		t.Fatal("q returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q did not quit")
	}
}

func TestModel_Resize_Golden(t *testing.T) {
	m := feed(newTestModel(), poisonRun())
	m, _ = m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	golden(t, "resize_120x30", m)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 60, Height: 12})
	golden(t, "resize_60x12", m)
}

func TestModel_UnreachableTarget_Golden(t *testing.T) {
	m := tea.Model(newTestModel("http://127.0.0.1:9464"))
	m, _ = m.Update(TargetStatusMsg{Target: "http://127.0.0.1:9464", Err: errors.New("connect: connection refused"), RetryIn: 2 * time.Second, Attempt: 3})
	s := golden(t, "unreachable", m)
	for _, want := range []string{"unreachable: connect: connection refused", "retrying in 2s", "still trying"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	m, _ = m.Update(TargetStatusMsg{Target: "http://127.0.0.1:9464", Connected: true})
	if s := ansi.Strip(m.(Model).Render()); strings.Contains(s, "unreachable") || !strings.Contains(s, "1/1 targets connected") {
		t.Fatalf("reconnected screen:\n%s", s)
	}
}

func TestModel_Totals_FromMetricsWin(t *testing.T) {
	m := feed(newTestModel("a", "b"), poisonRun())
	m, _ = m.Update(TotalsMsg{Target: "a", Totals: map[string]observe.Totals{"orders": {Received: 100, Acknowledged: 90, Deferred: 6, Rejected: 4}}})
	m, _ = m.Update(TotalsMsg{Target: "b", Totals: map[string]observe.Totals{"orders": {Received: 50, Acknowledged: 50}}})
	s := ansi.Strip(m.(Model).Render())
	if !strings.Contains(s, "   150    140      6     4") {
		t.Fatalf("orders totals should sum both targets' /metrics:\n%s", s)
	}
}

// Between two scrapes the subscription row moves with the events: the last
// /metrics totals plus what arrived since (a fresh user saw the row lag the
// messages panel by the scrape interval).
func TestModel_Totals_PlusEventsSinceTheScrape(t *testing.T) {
	m := feed(newTestModel("a"), poisonRun())
	m, _ = m.Update(TotalsMsg{Target: "a", Totals: map[string]observe.Totals{"orders": {Received: 100, Acknowledged: 90, Deferred: 6, Rejected: 4}}})
	m = feed(m, []observe.Record{
		{Kind: "received", Time: t0.Add(time.Second), Subscription: "orders", MessageID: "late-1", Budget: 3},
		{Kind: "deferred", Time: t0.Add(time.Second), Subscription: "orders", MessageID: "late-1", DeliveryCount: 1, Budget: 3, Outcome: "defer"},
	})
	s := ansi.Strip(m.(Model).Render())
	if !strings.Contains(s, "   101     90      7     4") {
		t.Fatalf("orders row should be the scrape plus the two events since:\n%s", s)
	}
	m, _ = m.Update(TotalsMsg{Target: "a", Totals: map[string]observe.Totals{"orders": {Received: 101, Acknowledged: 90, Deferred: 7, Rejected: 4}}})
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, "   101     90      7     4") {
		t.Fatalf("a new scrape replaces, not adds:\n%s", s)
	}
}

// Pause freezes the subscription row too, and resuming does not count the
// held events twice (a fresh user saw 5/1 -> 6/2 while paused, then 7/3).
func TestModel_Pause_FreezesTotalsWithoutDoubleCounting(t *testing.T) {
	m := feed(newTestModel("a"), poisonRun())
	m, _ = m.Update(TotalsMsg{Target: "a", Totals: map[string]observe.Totals{"orders": {Received: 5, Acknowledged: 1}}})
	row := func() string { return ansi.Strip(m.(Model).Render()) }
	if !strings.Contains(row(), "     5      1") {
		t.Fatalf("before pause:\n%s", row())
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: 'p', Text: "p"})
	late := []observe.Record{
		{Kind: "received", Time: t0.Add(time.Second), Subscription: "orders", MessageID: "late-1", Budget: 3},
		{Kind: "acknowledged", Time: t0.Add(time.Second), Subscription: "orders", MessageID: "late-1", Budget: 3, Outcome: "ack"},
	}
	m = feed(m, late)
	m, _ = m.Update(TotalsMsg{Target: "a", Totals: map[string]observe.Totals{"orders": {Received: 6, Acknowledged: 2}}})
	if !strings.Contains(row(), "     5      1") {
		t.Fatalf("paused: the row moved:\n%s", row())
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: 'p', Text: "p"})
	if !strings.Contains(row(), "     6      2") {
		t.Fatalf("resumed: want 6 received, 2 acknowledged (no double count):\n%s", row())
	}
}

// While paused the rate column is frozen with the counts: it is measured at
// the moment of the pause, not decayed by the clock.
func TestModel_Pause_FreezesTheRate(t *testing.T) {
	now := t0.Add(5 * time.Second)
	m := tea.Model(New(Options{NoColor: true, Now: func() time.Time { return now }, Location: time.UTC, Tick: -1}))
	m = feed(m, poisonRun())
	rate := func() string {
		for _, l := range strings.Split(ansi.Strip(m.(Model).Render()), "\n") {
			if strings.HasPrefix(l, "orders ") {
				return strings.Fields(l)[1]
			}
		}
		t.Fatal("no orders row")
		return ""
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: 'p', Text: "p"})
	before := rate()
	now = now.Add(30 * time.Second)
	if after := rate(); after != before {
		t.Fatalf("RECV/S went %s -> %s while paused", before, after)
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: 'p', Text: "p"})
	if resumed := rate(); resumed == before {
		t.Fatalf("RECV/S still %s 30s later after resuming; the rate should age again", resumed)
	}
}

func TestModel_NoColor(t *testing.T) {
	plain := feed(newTestModel(), poisonRun()).(Model).Render()
	if strings.Contains(plain, "\x1b[") {
		t.Errorf("NO_COLOR screen has escape sequences: %q", plain)
	}
	cm := New(Options{Now: func() time.Time { return t0 }, Location: time.UTC, Tick: -1})
	colored := feed(cm, poisonRun()).(Model).Render()
	if !strings.Contains(colored, "\x1b[") {
		t.Error("colour screen has no escape sequences")
	}
	if ansi.Strip(colored) == "" {
		t.Error("colour screen is empty")
	}
}

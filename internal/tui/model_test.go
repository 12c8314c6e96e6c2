package tui

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
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

// TestModel_QKeyQuits: the dashboard's q key returns tea.Quit.
func TestModel_QKeyQuits(t *testing.T) {
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
// /metrics totals plus what arrived since (otherwise the row lags the
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
// held events twice (5/1 must not become 6/2 while paused, then 7/3).
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

// failingRun is orders' channel failing since t0+1s (three calls, the
// last error a long SDK message ending in the reason) and stalled, and
// payments' channel failing, then recovered.
func failingRun() []observe.Record {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	sdkErr := `channel failure: receive: operation error SQS: ReceiveMessage, exceeded maximum number of attempts, 3, https response error StatusCode: 0, RequestID: , request send failed, Post "http://127.0.0.1:1/": dial tcp 127.0.0.1:1: connect: connection refused`
	recs := []observe.Record{
		{Kind: "started", Time: at(0), Subscription: "orders", Budget: 3},
		{Kind: "started", Time: at(0), Subscription: "payments", Budget: -1},
	}
	for i := 1; i <= 3; i++ {
		recs = append(recs, observe.Record{Kind: "channel-failure", Time: at(1000 * i), Subscription: "orders", Budget: 3,
			Since: at(1000), Failures: i, Error: sdkErr, DelayMS: 500})
	}
	recs = append(recs,
		observe.Record{Kind: "stalled", Time: at(3001), Subscription: "orders", Budget: 3, Since: at(1000), Failures: 3, Error: sdkErr},
		observe.Record{Kind: "channel-failure", Time: at(1500), Subscription: "payments", Budget: -1, Since: at(1500), Failures: 1, Error: "receive: context deadline exceeded"},
		observe.Record{Kind: "channel-recovered", Time: at(2500), Subscription: "payments", Budget: -1, Since: at(1500), Failures: 1},
	)
	return recs
}

// Each subscription has a status line under its row: connected,
// or failing since when, for how long, how many calls, whether it is
// stalled (not ready), and the last error cut in the middle so both the
// failed call and the reason fit the width.
func TestModel_Status_FailingSinceWithLastError_Golden(t *testing.T) {
	m := feed(newTestModel(), failingRun())
	s := golden(t, "status_failing", m)
	for _, want := range []string{
		"✗ failing since 12:00:01 (4s, 3 failed calls) · not ready",
		"    last error: receive: operation er…p 127.0.0.1:1: connect: connection refused",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	var paymentsStatus string
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "payments ") {
			paymentsStatus = lines[i+1]
		}
	}
	if strings.TrimSpace(paymentsStatus) != "✓ connected" {
		t.Errorf("payments recovered; its status line = %q, want connected", paymentsStatus)
	}
	// Wider: the whole error fits.
	m, _ = m.Update(tea.WindowSizeMsg{Width: 250, Height: 24})
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, `Post "http://127.0.0.1:1/": dial tcp 127.0.0.1:1: connect: connection refused`) {
		t.Errorf("250 columns wide, the whole error should show:\n%s", s)
	}
	// A recovery clears it; a stop says so.
	m = feed(m, []observe.Record{{Kind: "channel-recovered", Time: t0.Add(4 * time.Second), Subscription: "orders", Budget: 3, Since: t0.Add(time.Second), Failures: 3}})
	if s := ansi.Strip(m.(Model).Render()); strings.Contains(s, "failing") || strings.Count(s, "✓ connected") != 2 {
		t.Errorf("after recovery both should be connected:\n%s", s)
	}
	m = feed(m, []observe.Record{{Kind: "stopped", Time: t0.Add(5 * time.Second), Subscription: "orders", Budget: 3, Error: "receive: access denied"}})
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, "✗ stopped: receive: access denied") {
		t.Errorf("a pump that stopped on an error should say so:\n%s", s)
	}
}

// A dashboard that joins during a failure (brighter watch connecting late)
// says since when from the record's Since, not from the first record it
// happened to see.
func TestModel_Status_SinceFromTheRecordNotTheFirstSeen(t *testing.T) {
	m := feed(newTestModel(), []observe.Record{{Kind: "channel-failure", Time: t0.Add(4 * time.Second), Subscription: "orders", Budget: 3,
		Since: t0.Add(-55 * time.Second), Failures: 40, Error: "receive: connection refused"}})
	s := ansi.Strip(m.(Model).Render())
	if !strings.Contains(s, "failing since 11:59:05 (1m0s, 40 failed calls)\n    last error: receive: connection refused") {
		t.Fatalf("status line:\n%s", s)
	}
}

func logRecords(n int) []observe.Record {
	var recs []observe.Record
	for i := 1; i <= n; i++ {
		r := observe.Record{Kind: observe.KindLog, Time: t0.Add(time.Duration(i) * time.Second), Level: "ERROR", Text: "channel failure; backing off",
			Subscription: "orders", Attrs: []observe.LogAttr{{Key: "error", Value: "receive: connection refused"}, {Key: "failures", Value: strconv.Itoa(i)}}}
		if i%3 == 0 {
			r = observe.Record{Kind: observe.KindLog, Time: t0.Add(time.Duration(i) * time.Second), Level: "WARN", Text: "redelivery budget exhausted; rejecting message",
				Subscription: "orders", MessageID: "poison-" + strconv.Itoa(i), Attrs: []observe.LogAttr{{Key: "delivery_count", Value: "3"}, {Key: "budget", Value: "3"}}}
		}
		recs = append(recs, r)
	}
	return recs
}

// The last Warn/Error log lines are in a panel at the bottom,
// oldest of the five first, with their attributes (message_id among them)
// in slog's text form; the title counts every line seen.
func TestModel_LogPanel_LastFiveWarnAndError_Golden(t *testing.T) {
	m := feed(newTestModel(), append(poisonRun(), logRecords(7)...))
	s := golden(t, "log_panel", m)
	for _, want := range []string{
		"LOG · warnings and errors · 7",
		"12:00:03 WARN  orders: redelivery budget exhausted; rejecting message message…",
		`12:00:07 ERROR orders: channel failure; backing off error="receive: connectio…`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	for _, gone := range []string{"12:00:01 ERROR", "12:00:02 ERROR"} {
		if strings.Contains(s, gone) {
			t.Errorf("screen shows %q, older than the last five", gone)
		}
	}
	// Wide enough, the whole line shows, the error before the other
	// attributes.
	w, _ := m.Update(tea.WindowSizeMsg{Width: 200, Height: 24})
	wide := ansi.Strip(w.(Model).Render())
	for _, want := range []string{
		"12:00:03 WARN  orders: redelivery budget exhausted; rejecting message message_id=poison-3 delivery_count=3 budget=3",
		`12:00:07 ERROR orders: channel failure; backing off error="receive: connection refused" failures=7`,
	} {
		if !strings.Contains(wide, want) {
			t.Errorf("200 columns wide, the screen lacks %q", want)
		}
	}
	// The filter applies to the log lines too.
	f := press(w, append(append([]string{"/"}, strings.Split("poison-6", "")...), "enter")...)
	if s := ansi.Strip(f.(Model).Render()); strings.Contains(s, "failures=7") || !strings.Contains(s, "message_id=poison-6") {
		t.Errorf("filtered log panel:\n%s", s)
	}
	// The panel survives a small screen: the panels above give way.
	m, _ = m.Update(tea.WindowSizeMsg{Width: 60, Height: 12})
	small := golden(t, "log_panel_60x12", m)
	if !strings.Contains(small, "12:00:07 ERROR orders: channel failure") || !strings.Contains(small, "/ filter") {
		t.Errorf("small screen lost the log panel or the keys:\n%s", small)
	}
}

// With Interrupt set (consume --tui), q asks the consumer to
// drain and the dashboard stays, saying how many messages are in flight as
// they settle; q again asks it to exit at once. Nothing quits the program
// but its caller.
func TestModel_Draining_AfterQ_Golden(t *testing.T) {
	interrupts := 0
	o := Options{Title: "brighter consume", NoColor: true, Now: func() time.Time { return t0.Add(5 * time.Second) }, Location: time.UTC, Tick: -1,
		Interrupt: func() { interrupts++ }}
	recs := append(poisonRun(), observe.Record{Kind: "received", Time: t0.Add(600 * time.Millisecond), Subscription: "orders", MessageID: "slow-2", Budget: 3})
	m := feed(New(o), recs)
	m, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if cmd == nil {
		t.Fatal("q returned no command")
	}
	if msg := cmd(); msg != nil {
		t.Fatalf("q's command returned %T; it must not quit the program", msg)
	}
	if interrupts != 1 {
		t.Fatalf("Interrupt called %d times, want 1", interrupts)
	}
	s := golden(t, "draining", m)
	if !strings.Contains(s, "draining (2 in flight)...") || !strings.Contains(s, "q exit at once") {
		t.Errorf("screen does not say draining with 2 in flight")
	}
	m = feed(m, []observe.Record{
		{Kind: "acknowledged", Time: t0.Add(time.Second), Subscription: "payments", MessageID: "slow-1", Budget: -1, Outcome: "ack"},
		{Kind: "stopped", Time: t0.Add(time.Second), Subscription: "payments", Budget: -1},
	})
	s = ansi.Strip(m.(Model).Render())
	if !strings.Contains(s, "draining (1 in flight)...") || !strings.Contains(s, "■ stopped") {
		t.Errorf("after one settle the screen should say 1 in flight and payments stopped:\n%s", s)
	}
	m, cmd = m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if cmd == nil || cmd() != nil || interrupts != 2 {
		t.Fatalf("second q: Interrupt called %d times, want 2", interrupts)
	}
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, "exiting at once (1 in flight left to the broker)...") {
		t.Errorf("after a second q:\n%s", s)
	}
}

// A consumer draining for a reason of its own (a signal) shows it too.
func TestModel_Draining_ShowsTheConsumersOwnReason(t *testing.T) {
	m := feed(newTestModel(), poisonRun())
	m, _ = m.Update(DrainingMsg{})
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, "draining (1 in flight)...") {
		t.Fatalf("screen after DrainingMsg:\n%s", s)
	}
}

// brighter watch with two replicas of one consumer: each target's channel
// status is its own, so one replica's recovery does not hide the other's
// failure.
func TestModel_Status_IsPerTargetSoOneRecoveryHidesNoFailure(t *testing.T) {
	a, b := "http://orders-1:9464", "http://orders-2:9464"
	m := tea.Model(newTestModel(a, b))
	fail := func(ms int) observe.Record {
		return observe.Record{Kind: "channel-failure", Time: t0.Add(time.Duration(ms) * time.Millisecond), Subscription: "orders", Budget: 3,
			Since: t0.Add(time.Second), Failures: 2, Error: "receive: connection refused"}
	}
	m, _ = m.Update(EventsMsg{Target: a, Records: []observe.Record{fail(1000)}})
	m, _ = m.Update(EventsMsg{Target: b, Records: []observe.Record{fail(1500), {Kind: "channel-recovered", Time: t0.Add(2 * time.Second), Subscription: "orders", Budget: 3}}})
	s := ansi.Strip(m.(Model).Render())
	if !strings.Contains(s, "✗ "+a+": failing since 12:00:01 (4s, 2 failed calls)") || strings.Contains(s, b+": failing") || strings.Contains(s, "✓ connected") {
		t.Fatalf("orders-1 is failing, orders-2 recovered:\n%s", s)
	}
	m, _ = m.Update(EventsMsg{Target: a, Records: []observe.Record{{Kind: "channel-recovered", Time: t0.Add(3 * time.Second), Subscription: "orders", Budget: 3}}})
	if s := ansi.Strip(m.(Model).Render()); strings.Contains(s, "failing") || !strings.Contains(s, "✓ connected") {
		t.Fatalf("both recovered:\n%s", s)
	}
	// Paused, the records wait with their target.
	m = press(m, "p")
	m, _ = m.Update(EventsMsg{Target: b, Records: []observe.Record{fail(4000)}})
	if s := ansi.Strip(m.(Model).Render()); strings.Contains(s, "failing") || !strings.Contains(s, "PAUSED (1 waiting)") {
		t.Fatalf("paused:\n%s", s)
	}
	m = press(m, "p")
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, "✗ "+b+": failing since") {
		t.Fatalf("resumed:\n%s", s)
	}
}

// A batcher stamps each record it sends with its target, so the
// dashboard keeps each target's channel status apart.
func TestBatcher_StampsItsTarget(t *testing.T) {
	b := NewBatcher(time.Hour, 0)
	b.Target = "http://orders-1:9464"
	b.Add(observe.Record{Kind: "received"})
	if m, ok := b.Take(); !ok || m.Target != b.Target || len(m.Records) != 1 {
		t.Fatalf("Take = %+v, %v", m, ok)
	}
}

// consume --tui while it connects: the line under the header says which
// subscription is being opened, on which transport and endpoint, and for
// how long (counted from ConnectingMsg.Since, redrawn with the clock); q
// gives the connection up (the line says stopping, the key line that q
// again exits at once), and ConnectedMsg ends the line.
func TestModel_Connecting(t *testing.T) {
	now := t0.Add(5 * time.Second)
	interrupts := 0
	o := Options{Title: "brighter consume", NoColor: true, Now: func() time.Time { return now }, Location: time.UTC, Tick: -1,
		Interrupt: func() { interrupts++ }}
	var m tea.Model = New(o)
	m, _ = m.Update(ConnectingMsg{Subscription: "orders", Index: 2, Of: 3, Transport: "sqs", Endpoint: "http://127.0.0.1:4566", Since: t0})
	want := "connecting to the broker for 5s: subscription orders (2 of 3)...\n  sqs at http://127.0.0.1:4566\n"
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, want) || !strings.Contains(s, "q stop: give up the connection") {
		t.Fatalf("screen while connecting lacks %q or q's meaning:\n%s", want, s)
	}
	now = t0.Add(17*time.Second + 600*time.Millisecond)
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, "for 17s: subscription orders") {
		t.Fatalf("the time connecting did not move with the clock:\n%s", s)
	}
	m, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if cmd == nil || cmd() != nil || interrupts != 1 {
		t.Fatalf("q while connecting: Interrupt called %d times, want 1 (and no quit)", interrupts)
	}
	s := ansi.Strip(m.(Model).Render())
	if !strings.Contains(s, "stopping: giving up the connection (subscription orders)") ||
		!strings.Contains(s, "q exit at once") || strings.Contains(s, "draining") {
		t.Fatalf("screen after q while connecting:\n%s", s)
	}
	if m, cmd = m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}); cmd != nil {
		cmd()
	}
	if s := ansi.Strip(m.(Model).Render()); interrupts != 2 || !strings.Contains(s, "exiting at once...") {
		t.Fatalf("second q while connecting: Interrupt called %d times, screen:\n%s", interrupts, s)
	}

	m = feed(New(o), nil)
	m, _ = m.Update(ConnectingMsg{Subscription: "orders", Index: 1, Of: 1, Transport: "memory", Since: t0})
	if s := ansi.Strip(m.(Model).Render()); !strings.Contains(s, "connecting to the broker for 17s: subscription orders...\n  memory\n") {
		t.Fatalf("one memory subscription:\n%s", s)
	}
	m, _ = m.Update(ConnectedMsg{})
	if s := ansi.Strip(m.(Model).Render()); strings.Contains(s, "connecting") || strings.Contains(s, "draining") {
		t.Fatalf("after ConnectedMsg the connecting line stays:\n%s", s)
	}
}

// consume --tui while it opens its channels in turn: a row says connected
// only once its channel is open (ConnectingMsg.Opened); the one being
// opened says connecting and for how long, the others that they wait for
// it; after q the one being opened gives up and the others are not
// connected; ConnectedMsg gives every row its usual status.
func TestModel_ConnectingRows(t *testing.T) {
	now := t0.Add(5 * time.Second)
	o := Options{Title: "brighter consume", NoColor: true, Now: func() time.Time { return now }, Location: time.UTC, Tick: -1,
		Interrupt: func() {}}
	var recs []observe.Record
	for _, n := range []string{"a-memory", "b-silent", "c-later"} {
		recs = append(recs, observe.Record{Kind: observe.KindSubscription, Subscription: n, Budget: 3, Info: &observe.SubscriptionInfo{Budget: 3}})
	}
	m := feed(New(o), recs)
	m, _ = m.Update(ConnectingMsg{Subscription: "b-silent", Index: 2, Of: 3, Transport: "gcp", Since: t0, Opened: []string{"a-memory"}})
	row := func(s, name string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, name+" ") && i+1 < len(lines) {
				return strings.TrimSpace(lines[i+1])
			}
		}
		return ""
	}
	s := ansi.Strip(m.(Model).Render())
	for name, want := range map[string]string{"a-memory": "✓ connected", "b-silent": "… connecting (for 5s)", "c-later": "· waiting to connect (after subscription b-silent)"} {
		if got := row(s, name); got != want {
			t.Errorf("while connecting, %s's status is %q, want %q:\n%s", name, got, want, s)
		}
	}
	m = press(m, "q")
	s = ansi.Strip(m.(Model).Render())
	for name, want := range map[string]string{"a-memory": "✓ connected", "b-silent": "… giving up the connection", "c-later": "■ not connected"} {
		if got := row(s, name); got != want {
			t.Errorf("after q while connecting, %s's status is %q, want %q:\n%s", name, got, want, s)
		}
	}
	m, _ = m.Update(ConnectedMsg{})
	s = ansi.Strip(m.(Model).Render())
	for _, name := range []string{"a-memory", "b-silent", "c-later"} {
		if got := row(s, name); got != "✓ connected" {
			t.Errorf("after ConnectedMsg, %s's status is %q, want connected:\n%s", name, got, s)
		}
	}
}

// A log line longer than the screen is cut in the LOG panel; tab focuses
// the panel (the newest line under the cursor, ↑ an older one) and enter
// opens the line whole: every attribute on its own line, wrapped, none
// cut; esc goes back.
func TestModel_LogLineOpensWhole(t *testing.T) {
	const note = "expected on the Pub/Sub emulator, which does not implement the IAM API; nothing needs doing"
	recs := []observe.Record{
		{Kind: observe.KindLog, Time: t0, Level: "ERROR", Subscription: "orders", Text: "channel failure; backing off",
			Attrs: []observe.LogAttr{{Key: "error", Value: "receive: connection refused"}}},
		{Kind: observe.KindLog, Time: t0.Add(time.Second), Level: "WARN", Subscription: "payments", Text: "cannot check the dead-letter permissions of the subscription",
			Attrs: []observe.LogAttr{{Key: "error", Value: "rpc error: code = Unimplemented"}, {Key: "note", Value: note}}},
	}
	m := feed(newTestModel(), recs)
	if s := ansi.Strip(m.(Model).Render()); strings.Contains(s, "nothing needs doing") {
		t.Fatalf("the long log line was not cut at 80 columns, so this test shows nothing:\n%s", s)
	}
	m = press(m, "tab", "tab")
	s := ansi.Strip(m.(Model).Render())
	if !strings.Contains(s, "LOG · warnings and errors · 2 ◂") || !strings.Contains(s, "› 12:00:01 WARN  payments:") {
		t.Fatalf("tab twice does not focus the LOG panel with its newest line under the cursor:\n%s", s)
	}
	m = press(m, "enter")
	s = ansi.Strip(m.(Model).Render())
	if !strings.Contains(s, "DETAILS · log line") || strings.Contains(s, "nothing selected") {
		t.Fatalf("enter on the LOG panel does not open the line:\n%s", s)
	}
	if got := strings.Join(strings.Fields(s), " "); !strings.Contains(got, "note "+note) || !strings.Contains(got, "error rpc error: code = Unimplemented") {
		t.Fatalf("the opened log line lacks its whole note or error:\n%s", s)
	}
	for i, l := range strings.Split(s, "\n") {
		if w := ansi.StringWidth(l); w > DefaultWidth {
			t.Errorf("line %d is %d cells wide, want at most %d: %q", i+1, w, DefaultWidth, l)
		}
	}
	m = press(m, "esc", "k", "enter")
	if s = ansi.Strip(m.(Model).Render()); !strings.Contains(s, "channel failure; backing off") || !strings.Contains(s, "subscription       orders") {
		t.Fatalf("↑ then enter does not open the older line:\n%s", s)
	}
}

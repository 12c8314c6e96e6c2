package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/observe"
)

// crowdedRun is poisonRun with three more poison messages rejected to the
// dead-letter queue: five rejections, each but one with its message.
func crowdedRun() []observe.Record { return poisonRuns(4) }

// poisonRuns is poisonRun with poison-2 to poison-n rejected to the
// dead-letter queue too.
func poisonRuns(n int) []observe.Record {
	recs := poisonRun()
	for i := 2; i <= n; i++ {
		id := fmt.Sprintf("poison-%d", i)
		at := t0.Add(time.Duration(600+i*10) * time.Millisecond)
		recs = append(recs,
			observe.Record{Kind: "received", Time: at, Subscription: "orders", MessageID: id, DeliveryCount: 3, Budget: 3},
			observe.Record{Kind: "rejected", Time: at.Add(time.Millisecond), Subscription: "orders", MessageID: id, DeliveryCount: 3, Budget: 3, Outcome: "defer",
				Reason: "DeliveryError", Route: "dead-letter", Destination: "orders-dlq", Description: "redelivery budget exhausted: delivery count 3 reached requeueCount 3"})
	}
	return recs
}

// rejectionRows are the rejections drawn on screen: the lines of the
// rejections panel naming a rejected message id.
func rejectionRows(screen string) []string {
	var rows []string
	in := false
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.HasPrefix(l, "REJECTIONS"):
			in = true
		case strings.HasPrefix(l, "LOG"):
			in = false
		case in && (strings.Contains(l, "poison-") || strings.Contains(l, "bad-1")):
			rows = append(rows, l)
		}
	}
	return rows
}

// TestModel_Rejections_UseTheRowsTheyHave_AndSayHowManyMore: at 80x24 the
// rejections panel draws as many of its five rejections as its lines hold
// (one line each when they do not all fit with their messages, the
// messages panel giving the lines it does not need) and says how many are
// left out ("+N more"); the header count and the rows drawn plus the hint
// always add up, and the cursor scrolls to the ones left out. At 200x60
// every rejection is drawn with its message, and no hint.
func TestModel_Rejections_UseTheRowsTheyHave_AndSayHowManyMore(t *testing.T) {
	m := feed(newTestModel(), crowdedRun())
	s := golden(t, "rejections_80x24", m)
	rows := rejectionRows(s)
	if !strings.Contains(s, "REJECTIONS · 5") {
		t.Fatalf("header does not count five rejections:\n%s", s)
	}
	if len(rows) < 3 {
		t.Errorf("80x24 draws %d rejections, want every one the panel has room for (at least 3):\n%s", len(rows), s)
	}
	if want := fmt.Sprintf("  +%d more", 5-len(rows)); !strings.Contains(s, want+"\n") {
		t.Errorf("80x24 draws %d of 5 rejections without saying %q:\n%s", len(rows), want, s)
	}
	if strings.Contains(s, "REJECTIONS · 5\n") && strings.Contains(s, "\n\nLOG") {
		t.Errorf("a blank line above the log panel while rejections are left out:\n%s", s)
	}

	// The cursor reaches the rejections left out: the last one is drawn
	// once selected, and the hint still counts those not drawn.
	last := press(m, "tab", "down", "down", "down", "down")
	ls := ansi.Strip(last.(Model).Render())
	lrows := rejectionRows(ls)
	if len(lrows) == 0 || !strings.HasPrefix(lrows[len(lrows)-1], "›") {
		t.Errorf("the selected (last) rejection is not drawn:\n%s", ls)
	}
	if want := fmt.Sprintf("  +%d more", 5-len(lrows)); !strings.Contains(ls, want+"\n") {
		t.Errorf("scrolled, %d of 5 rejections drawn without saying %q:\n%s", len(lrows), want, ls)
	}

	big, _ := m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	b := golden(t, "rejections_200x60", big)
	if got := len(rejectionRows(b)); got != 5 {
		t.Errorf("200x60 draws %d of 5 rejections:\n%s", got, b)
	}
	if n := strings.Count(b, "requeueCount 3"); n != 4 {
		t.Errorf("200x60: the four rejection messages drawn %d times, want once each in their column:\n%s", n, b)
	}
	if strings.Contains(b, "more") || !strings.Contains(b, "REJECTION MESSAGE") {
		t.Errorf("200x60: every rejection fits, with its message in a column:\n%s", b)
	}
}

// TestModel_Messages_SayHowManyMore: the messages panel, short of room,
// says how many messages it leaves out as the rejections panel does.
func TestModel_Messages_SayHowManyMore(t *testing.T) {
	m, _ := feed(newTestModel(), crowdedRun()).Update(tea.WindowSizeMsg{Width: 80, Height: 18})
	s := ansi.Strip(m.(Model).Render())
	drawn := 0
	in := false
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(l, "MESSAGES"):
			in = true
		case strings.HasPrefix(l, "REJECTIONS"):
			in = false
		case in && strings.Contains(l, "12:00:00"):
			drawn++
		}
	}
	if !strings.Contains(s, "MESSAGES · 1 in flight · 6 recently settled") {
		t.Fatalf("messages title:\n%s", s)
	}
	if want := fmt.Sprintf("  +%d more\n", 7-drawn); drawn == 0 || drawn >= 7 || !strings.Contains(s, want) {
		t.Errorf("%d of 7 messages drawn, want the rest counted as %q:\n%s", drawn, want, s)
	}
}

// blankAboveLog reports whether the screen has an empty line right above
// the log panel: rows a panel above could have used.
func blankAboveLog(screen string) bool { return strings.Contains(screen, "\n\nLOG") }

// panelRows counts the lines between the line starting with from and the
// one starting with to that contain sub.
func panelRows(screen, from, to, sub string) int {
	n, in := 0, false
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.HasPrefix(l, from):
			in = true
		case strings.HasPrefix(l, to):
			in = false
		case in && strings.Contains(l, sub):
			n++
		}
	}
	return n
}

// TestModel_Panels_GiveTheRowsTheyDoNotNeed: the messages panel, with
// fewer messages than its share of the screen, gives the rows it does not
// use to the rejections, and the rejections panel gives its to the
// messages: at 80x24 no row is left blank while either leaves some out.
func TestModel_Panels_GiveTheRowsTheyDoNotNeed(t *testing.T) {
	// No message matches "dead-letter" (a route), twenty rejections do.
	m := press(feed(newTestModel(), poisonRuns(20)), append(append([]string{"/"}, strings.Split("dead-letter", "")...), "enter")...)
	s := ansi.Strip(m.(Model).Render())
	rows := panelRows(s, "REJECTIONS", "LOG", "poison-")
	if !strings.Contains(s, "REJECTIONS · 20") || !strings.Contains(s, "no message matches the filter") {
		t.Fatalf("filtered screen:\n%s", s)
	}
	if blankAboveLog(s) || rows < 10 || !strings.Contains(s, fmt.Sprintf("  +%d more\n", 20-rows)) {
		t.Errorf("the rejections drew %d of 20 rows, want the rows the messages panel does not use, and the rest counted:\n%s", rows, s)
	}

	// Twenty acknowledged messages and two rejections.
	recs := poisonRun()
	for i := range 20 {
		at := t0.Add(time.Duration(700+i) * time.Millisecond)
		id := fmt.Sprintf("ok-%02d", i)
		recs = append(recs,
			observe.Record{Kind: "received", Time: at, Subscription: "orders", MessageID: id, Budget: 3},
			observe.Record{Kind: "acknowledged", Time: at, Subscription: "orders", MessageID: id, Budget: 3, Outcome: "ack"})
	}
	m = feed(newTestModel(), recs)
	s = ansi.Strip(m.(Model).Render())
	msgs := panelRows(s, "MESSAGES", "REJECTIONS", "12:00:00")
	if panelRows(s, "REJECTIONS", "LOG", "12:00:00") != 2 || !strings.Contains(s, "↳ redelivery budget exhausted") {
		t.Fatalf("the two rejections and the message of one are not all drawn:\n%s", s)
	}
	if blankAboveLog(s) || msgs < 6 || !strings.Contains(s, fmt.Sprintf("  +%d more\n", 24-msgs)) {
		t.Errorf("the messages drew %d of 24 rows, want the rows the rejections panel does not use, and the rest counted:\n%s", msgs, s)
	}
}

// TestModel_Panels_TooSmallForARow_SayHowManyTheyHave: on a screen with
// room for no row in either panel (80x16 here), each panel still says how
// many rows it leaves out rather than showing a title with nothing under
// it.
func TestModel_Panels_TooSmallForARow_SayHowManyTheyHave(t *testing.T) {
	m, _ := feed(newTestModel(), crowdedRun()).Update(tea.WindowSizeMsg{Width: 80, Height: 16})
	s := ansi.Strip(m.(Model).Render())
	for _, want := range []string{"REJECTIONS · 5", "  +5 more\n", "  +7 more\n", "/ filter"} {
		if !strings.Contains(s, want) {
			t.Errorf("80x16 lacks %q:\n%s", want, s)
		}
	}
}

package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/observe"
)

// injected are terminal control sequences a sender or a handler can put
// in a message id, a rejection message, a header, the bag or the body:
// an OSC 0 title, a CSI clear screen, an OSC 52 clipboard write ended by
// BEL, a C1 CSI. No styling of the dashboard writes any of them.
var injected = []string{"\x1b]0;", "\x1b[2J", "\x1b]52;", "\x07", "\u009b"}

// TestModel_ShowsControlCharactersEscaped: records whose message id,
// rejection message, destination, message detail (topic, bag, body) and
// log line carry terminal control sequences are shown by brighter watch
// and consume --tui (the messages, rejections and log panels and their
// details) with each control character escaped (\x1b, \a, \u009b),
// never raw; the records fed are not changed (the /events readers of
// the same run share them).
func TestModel_ShowsControlCharactersEscaped(t *testing.T) {
	const id = "ev\x1b]0;PWNED\x07il"
	detail := &observe.MessageDetail{Topic: "orders\x1b[2J", ContentType: "text/plain", BodyPreview: "line1\n\x1b]52;c;SGVsbG8=\x07", BodySize: 20,
		Bag: map[string]any{"tenant": "acme\u009b8m"}}
	recs := []observe.Record{
		{Kind: observe.KindSubscription, Subscription: "orders", Budget: 3, Info: &observe.SubscriptionInfo{Transport: "sqs", Budget: 3, EffectiveLimit: 3}},
		{Kind: "received", Time: t0, Subscription: "orders", MessageID: id, Budget: 3, Message: detail},
		{Kind: "rejected", Time: t0.Add(time.Millisecond), Subscription: "orders", MessageID: id, DeliveryCount: 3, Budget: 3, Reason: "DeliveryError",
			Route: "dlq", Destination: "orders-dlq\x1b[2J", Description: "bad \x1b]52;c;SGVsbG8=\x07 evil"},
		{Kind: observe.KindLog, Time: t0.Add(2 * time.Millisecond), Level: "WARN", Subscription: "orders", MessageID: id, Text: "handler said \x1b]0;x\x07",
			Attrs: []observe.LogAttr{{Key: "error", Value: "boom \x1b[2J"}}},
	}
	m := feed(newTestModel(), recs)
	screens := map[string]tea.Model{
		"main":              m,
		"message details":   press(m, "enter"),
		"rejection details": press(m, "tab", "enter"),
		"log details":       press(m, "tab", "tab", "enter"),
	}
	var all strings.Builder
	for name, s := range screens {
		raw := s.(Model).Render()
		all.WriteString(raw)
		for _, seq := range injected {
			if strings.Contains(raw, seq) {
				t.Errorf("the %s screen writes %q raw:\n%q", name, seq, raw)
			}
		}
	}
	for _, w := range []string{`ev\x1b]0;PWNED\ail`, `bad \x1b]52;c;SGVsbG8=\a evil`, `orders\x1b[2J`, `acme\u009b8m`, `\x1b]52;c;SGVsbG8=\a`, `handler said \x1b]0;x\a`, `boom \x1b[2J`} {
		if !strings.Contains(all.String(), w) {
			t.Errorf("no screen shows %s:\n%s", w, all.String())
		}
	}
	if recs[1].MessageID != id || detail.Topic != "orders\x1b[2J" || detail.Bag["tenant"] != "acme\u009b8m" || recs[3].Attrs[0].Value != "boom \x1b[2J" {
		t.Error("the records fed were changed")
	}
}

package conformance

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// The limit rows: what brighter writes fits every broker's limits,
// in bytes (internal/broker/limits).
const rowLongReason = "R-18/long-reason"

// limitBehaviours are the limit rows.
var limitBehaviours = []Behaviour{
	{rowLongReason, "R-18", "a multi-byte rejection reason over 1,024 bytes is routed cut to 1,024 bytes on a rune boundary, marker included (Pub/Sub's attribute value limit)", KindPump},
}

// longReason is over message.MaxRejectionText in bytes and made of
// three-byte runes, so a cut by characters, or one that splits a rune,
// shows.
var longReason = "отказ € " + strings.Repeat("€", 600)

// runLimits runs the limit rows over f in variant v.
func runLimits(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	g.Run(t, rowLongReason, f, v, func(t *testing.T) {
		reject := func(context.Context, *message.Message) pump.Result {
			return pump.Result{Outcome: pump.Reject, Reason: longReason}
		}
		sc := run(t, f, v, Setup{RequeueCount: 3, DeadLetter: true}, reject)
		m := firstOn(t, sc.ch.DeadLetter(t), sc.id, waitLong)
		sc.running.Quit(t)
		for _, k := range []string{message.KeyRejectionMessage, message.KeyPumpRejectionReason} {
			got, ok := m.Header.Bag.String(k)
			if !ok {
				t.Errorf("the dead-letter copy has no %s", k)
				continue
			}
			if len(got) > message.MaxRejectionText || !utf8.ValidString(got) {
				t.Errorf("%s is %d bytes (valid UTF-8 %v), want at most %d bytes of valid UTF-8", k, len(got), utf8.ValidString(got), message.MaxRejectionText)
			}
			text, cut := strings.CutSuffix(got, message.TruncationMarker)
			if !cut || !strings.Contains(longReason, strings.TrimPrefix(text, "Message rejected reason: DeliveryError Description: ")) {
				t.Errorf("%s = %q…, want a prefix of the reason ending %q", k, got[:min(len(got), 40)], message.TruncationMarker)
			}
			if len(got) < message.MaxRejectionText-utf8.UTFMax {
				t.Errorf("%s is %d bytes: cut short of the %d-byte limit", k, len(got), message.MaxRejectionText)
			}
		}
	})
}

func init() { registerRows(limitBehaviours...) }

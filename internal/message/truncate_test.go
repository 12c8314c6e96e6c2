package message_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/brightergo/brighter/internal/message"
)

// TestTruncateBytes_CutsOnARuneBoundaryWithTheMarkerInsideTheLimit: the cut is
// by bytes, on a rune boundary, and the marker counts toward the limit.
func TestTruncateBytes_CutsOnARuneBoundaryWithTheMarkerInsideTheLimit(t *testing.T) {
	m := message.TruncationMarker
	cases := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short text is kept", "abc", 10, "abc"},
		{"exactly at the limit is kept whole", strings.Repeat("a", 16), 16, strings.Repeat("a", 16)},
		{"one byte over is cut with the marker inside the limit", strings.Repeat("a", 17), 16, strings.Repeat("a", 16-len(m)) + m},
		// "é" is two bytes: 16 bytes of limit leave 16-len(m) for text, and
		// a rune is never split.
		{"two-byte runes are not split", strings.Repeat("é", 20), 16, strings.Repeat("é", (16-len(m))/2) + m},
		{"three-byte runes are not split", strings.Repeat("€", 20), len(m) + 5, "€" + m},
		{"four-byte runes are not split", strings.Repeat("😀", 20), len(m) + 7, "😀" + m},
		{"exactly at the limit in multi-byte text is kept whole", strings.Repeat("€", 5), 15, strings.Repeat("€", 5)},
		{"a limit shorter than the marker gives a rune-safe part of it", "abcdefghijklmnopqrstuvwxyz", 2, "…"[:0]},
		{"a limit of the marker alone", "abcdefghijklmnopqrstuvwxyz", len(m), m},
		{"zero limit", "abc", 0, ""},
		{"invalid UTF-8 is replaced", "a\xffb", 10, "a\uFFFDb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := message.TruncateBytes(c.in, c.n)
			if got != c.want {
				t.Fatalf("TruncateBytes(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
			}
			if len(got) > max(c.n, 0) || !utf8.ValidString(got) {
				t.Fatalf("TruncateBytes(%q, %d) = %q: %d bytes, valid %v", c.in, c.n, got, len(got), utf8.ValidString(got))
			}
		})
	}
}

// TestStampBoundsRejectionTexts: a long multi-byte rejection reason
// is written as at most MaxRejectionText bytes (Pub/Sub's attribute value
// limit), in rejectionMessage and in the pump's RejectionReason line.
func TestStampBoundsRejectionTexts(t *testing.T) {
	m := message.New("id", "orders", message.MTCommand, []byte("{}"))
	desc := strings.Repeat("ошибка ", 400) // 2-byte runes, far over the limit
	c := message.Stamp(m, "orders.dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: desc}, time.Unix(0, 0))
	for _, k := range []string{message.KeyRejectionMessage, message.KeyPumpRejectionReason} {
		v, _ := c.Header.Bag.String(k)
		if len(v) > message.MaxRejectionText || !utf8.ValidString(v) || !strings.HasSuffix(v, message.TruncationMarker) {
			t.Errorf("%s is %d bytes (limit %d), valid UTF-8 %v, ends %q", k, len(v), message.MaxRejectionText, utf8.ValidString(v), v[max(len(v)-20, 0):])
		}
	}
	short := message.Stamp(m, "orders.dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "spent"}, time.Unix(0, 0))
	if v, _ := short.Header.Bag.String(message.KeyRejectionMessage); v != "spent" {
		t.Errorf("a short rejectionMessage was changed to %q", v)
	}
}

// TestMarkUndecodableKeepsCarriedType: an undecodable message's
// routed copy records the type it carried as originalMessageType, not
// MT_UNACCEPTABLE.
func TestMarkUndecodableKeepsCarriedType(t *testing.T) {
	m := message.New("id", "orders", message.MTCommand, nil)
	m.MarkUndecodable("bag: not a JSON object")
	if m.Header.MessageType != message.MTUnacceptable || m.Undecodable != "bag: not a JSON object" {
		t.Fatalf("marked message is %v / %q", m.Header.MessageType, m.Undecodable)
	}
	c := message.Stamp(m, "orders.invalid", message.Rejection{Reason: message.ReasonUnacceptable}, time.Unix(0, 0))
	if v, _ := c.Header.Bag.String(message.KeyOriginalMessageType); v != "MT_COMMAND" {
		t.Fatalf("originalMessageType = %q, want MT_COMMAND", v)
	}
	// Unreadable type text the decoder already kept wins.
	u := message.New("id", "orders", message.MTUnacceptable, nil)
	u.WireMessageType = "MT_WHATEVER"
	u.MarkUndecodable("message-type: unknown")
	if u.WireMessageType != "MT_WHATEVER" {
		t.Fatalf("WireMessageType = %q, want the received text", u.WireMessageType)
	}
}

// FuzzTruncateBytes: for any text and limit the result is valid
// UTF-8 within the limit, the text itself when it fits, else a prefix of it
// (as valid UTF-8) followed by the marker.
func FuzzTruncateBytes(f *testing.F) {
	for _, s := range []string{"", "abc", strings.Repeat("€", 400), "a\xffb\xc3", strings.Repeat("😀", 300)} {
		f.Add(s, 1024)
		f.Add(s, 13)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 4096
		got := message.TruncateBytes(s, n)
		if !utf8.ValidString(got) {
			t.Fatalf("TruncateBytes(%q, %d) = %q: not valid UTF-8", s, n, got)
		}
		if len(got) > max(n, 0) {
			t.Fatalf("TruncateBytes(%q, %d) = %q: %d bytes", s, n, got, len(got))
		}
		valid := strings.ToValidUTF8(s, "\uFFFD")
		switch {
		case n <= 0:
			if got != "" {
				t.Fatalf("TruncateBytes(%q, %d) = %q, want empty", s, n, got)
			}
		case len(valid) <= n:
			if got != valid {
				t.Fatalf("TruncateBytes(%q, %d) = %q, want the text whole", s, n, got)
			}
		case n >= len(message.TruncationMarker):
			text, ok := strings.CutSuffix(got, message.TruncationMarker)
			if !ok || !strings.HasPrefix(valid, text) {
				t.Fatalf("TruncateBytes(%q, %d) = %q: not a prefix and the marker", s, n, got)
			}
			if n-len(text)-len(message.TruncationMarker) >= utf8.UTFMax {
				t.Fatalf("TruncateBytes(%q, %d) = %q: cut %d bytes short of the limit", s, n, got, n-len(got))
			}
		}
	})
}

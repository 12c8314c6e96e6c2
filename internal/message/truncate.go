package message

import (
	"strings"
	"unicode/utf8"
)

// MaxRejectionText is the most bytes of UTF-8 text a rejection text written
// into a routed copy's bag may take (KeyRejectionMessage and
// KeyPumpRejectionReason), the truncation marker included: Pub/Sub's
// attribute value limit, the smallest of the transports
// (internal/broker/limits.MaxRejectionText).
const MaxRejectionText = 1024

// TruncationMarker ends a text TruncateBytes cut.
const TruncationMarker = "…[truncated]"

// TruncateBytes returns s as valid UTF-8 of at most n bytes: s itself when
// it fits (invalid bytes replaced by U+FFFD, which may lengthen it, and then
// it is cut too), else its longest prefix that ends on a rune boundary and
// leaves room for TruncationMarker, followed by the marker. The marker counts
// toward n; for n shorter than the marker, the prefix of the marker that fits
// on a rune boundary. n <= 0 gives "".
func TruncateBytes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	keep := n - len(TruncationMarker)
	if keep < 0 {
		return runePrefix(TruncationMarker, n)
	}
	return runePrefix(s, keep) + TruncationMarker
}

// runePrefix is the longest prefix of the valid UTF-8 s of at most n bytes
// that ends on a rune boundary.
func runePrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

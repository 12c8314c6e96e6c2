package handler

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/brightergo/brighter/internal/redact"
)

// Header values of the http handler: the percent-encoding of the bytes a
// header may not carry, and its CloudEvents form both ways.

// headerValue percent-encodes the bytes a header value may not carry as
// they are: controls, non-ASCII, '"' and '%' (spaces are kept: a
// Content-Type has them).
func headerValue(s string) string { return percentEncode(s, needsEscape) }

// percentEncode writes every byte of s that esc selects as %XX.
func percentEncode(s string, esc func(byte) bool) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if esc(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if esc(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func needsEscape(c byte) bool { return c < 0x20 || c > 0x7e || c == '"' || c == '%' }

// CEHeaderValue percent-encodes s as the CloudEvents HTTP protocol
// binding requires of a string attribute sent as a ce-* header value: as
// UTF-8, every byte outside printable ASCII (U+0021..U+007E) and space,
// '"' and '%' become %XX (upper-case hex); every other byte is kept.
// Without the space, a value's leading and trailing spaces would be lost
// (HTTP drops the whitespace around a header value).
func CEHeaderValue(s string) string {
	return percentEncode(s, ceNeedsEscape)
}

func ceNeedsEscape(c byte) bool { return c <= 0x20 || c > 0x7e || c == '"' || c == '%' }

// DecodeCEHeaderValue decodes a ce-* header value as the CloudEvents HTTP
// protocol binding says: a value in double quotes is first unquoted as an
// RFC 7230 quoted-string (backslash escapes), then every %XX is decoded;
// a value encoded where it need not be is accepted. It returns an error
// for a % not followed by two hex digits, an unterminated quoted-string,
// and a result that is not valid UTF-8 (an overlong "%C0%A0" included).
func DecodeCEHeaderValue(v string) (string, error) {
	if len(v) >= 1 && v[0] == '"' {
		if len(v) < 2 || v[len(v)-1] != '"' {
			return "", fmt.Errorf("header value %s: unterminated quoted-string", redact.Quote(v))
		}
		var b strings.Builder
		in := v[1 : len(v)-1]
		for i := 0; i < len(in); i++ {
			c := in[i]
			if c == '\\' {
				if i+1 == len(in) {
					return "", fmt.Errorf("header value %s: quoted-string ends in a backslash", redact.Quote(v))
				}
				i++
				c = in[i]
			}
			b.WriteByte(c)
		}
		v = b.String()
	}
	if !strings.Contains(v, "%") {
		if !utf8.ValidString(v) {
			return "", fmt.Errorf("header value %s: not valid UTF-8", redact.Quote(v))
		}
		return v, nil
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '%' {
			out = append(out, c)
			continue
		}
		if i+2 >= len(v) || !isHex(v[i+1]) || !isHex(v[i+2]) {
			return "", fmt.Errorf("header value %s: %% at byte %d is not followed by two hex digits", redact.Quote(v), i)
		}
		out = append(out, unhex(v[i+1])<<4|unhex(v[i+2]))
		i += 2
	}
	if !utf8.Valid(out) {
		return "", fmt.Errorf("header value %s: decodes to bytes that are not valid UTF-8", redact.Quote(v))
	}
	return string(out), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

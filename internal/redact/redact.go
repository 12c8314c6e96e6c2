// Package redact is brighter's one redaction rule (docs/security.md).
// Every URL, header value and configured secret that brighter prints, logs,
// emits as an event, writes in a report or stamps on a message passes
// through it:
//
//   - a URL's user-info is replaced by Mask as a whole (user name and
//     password), every query value by Mask (the names are kept, so the
//     reader still sees which parameters were sent; the values of Kept,
//     brighter's own group= and file=, are kept too) and a fragment by Mask;
//     this applies to every scheme://... token found in free text, such as
//     an error from net/http that quotes the request URL;
//   - an http handler's endpoint is written by Endpoint, which masks its
//     path too (webhook endpoints carry their token there);
//   - values a Redactor was told are secret (the header values a handler
//     sends, access and secret keys, user-info, query values and paths of
//     configured URLs, exec handler environment values, the ${VAR}
//     values of handler blocks) are replaced by Mask wherever they
//     occur, every byte any of them covers, whatever order they were
//     added in;
//   - a value quoted in an error or finding is cut at MaxQuoted bytes and
//     shown with its length in bytes (Quote, Quoted, Cut); the final error
//     of a run passes Bound, which does the same to every value in text
//     brighter did not build (cobra's and pflag's usage errors).
//
// The functions are pure and never panic; Text and URL are fuzzed with the
// property that a secret in a URL's user-info or query never survives.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
package redact

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mask replaces a redacted value.
const Mask = "REDACTED"

// Kept are the query parameters whose values the rule keeps: the ones
// brighter's own destination URLs define (rocketmq://TOPIC?group=GROUP,
// memory://QUEUE?file=PATH), which name a consumer group or a local file,
// never a credential, and without which an operator could not tell two
// destinations apart.
var Kept = map[string]bool{"group": true, "file": true}

// MaxQuoted is the most bytes of a value Quote shows (uncut, a 200 KB
// key in a subscriptions file gave a 400 KB error line).
const MaxQuoted = 128

// Quote returns s quoted as Go quotes strings (strconv.Quote). A value
// longer than MaxQuoted bytes is cut on a rune boundary and followed by its
// length: "abc…" (200000 bytes).
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(cut(s, MaxQuoted)+"…") + " (" + strconv.Itoa(len(s)) + " bytes)"
}

// Cut returns s unchanged when it is at most MaxQuoted bytes, else its
// first MaxQuoted bytes (on a rune boundary), "…" and its length: the
// unquoted form of Quote, for %s.
func Cut(s string) string {
	if len(s) <= MaxQuoted {
		return s
	}
	return cut(s, MaxQuoted) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// cut returns at most n bytes of s, not splitting a rune.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	c := n
	for c > 0 && !utf8.RuneStart(s[c]) {
		c--
	}
	return s[:c]
}

// URL returns raw with its user-info, query values and fragment replaced by
// Mask. raw need not parse: the rule works on the text (scheme "://",
// user-info up to the last "@" before the path, query after the first "?",
// fragment after the first "#"), so a malformed URL is redacted as well as
// a good one.
func URL(raw string) string {
	if !strings.Contains(raw, "://") {
		return redactQuery(raw)
	}
	return redactAll(raw, func(r rune) bool { return false })
}

// Endpoint returns raw as URL does, with its path replaced by "/" and Mask
// as well: "https://hooks.example/services/T000/TOKEN?k=v" is shown as
// "https://hooks.example/REDACTED?k=REDACTED". Scheme, host and port stay,
// so a reader still sees where requests went. It is the form in which an
// http handler's endpoint is written anywhere (logs, errors, rejection
// messages): webhook endpoints carry their token in the path. A raw with no
// "://" is returned as URL returns it.
func Endpoint(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return URL(raw)
	}
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		return URL(raw)
	}
	auth, tail := rest[:authEnd], rest[authEnd:]
	q := strings.IndexAny(tail, "?#")
	if q < 0 {
		q = len(tail)
	}
	if path := tail[:q]; path != "" && path != "/" {
		tail = "/" + Mask + tail[q:]
	}
	return URL(scheme + "://" + auth + tail)
}

// redactAfterScheme redacts what follows "scheme://".
func redactAfterScheme(rest string) string {
	var b strings.Builder
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth := rest[:authEnd]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		b.WriteString(Mask)
		b.WriteString(auth[at:])
	} else {
		b.WriteString(auth)
	}
	b.WriteString(redactQuery(rest[authEnd:]))
	return b.String()
}

// redactQuery redacts the query values and fragment of a path?query#frag.
func redactQuery(s string) string {
	q := strings.IndexAny(s, "?#")
	if q < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:q])
	rest := s[q:]
	if rest[0] == '?' {
		query := rest[1:]
		frag := ""
		if h := strings.IndexByte(query, '#'); h >= 0 {
			query, frag = query[:h], query[h:]
		}
		b.WriteByte('?')
		for i, kv := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
			if i > 0 {
				b.WriteByte('&')
			}
			k, v, ok := strings.Cut(kv, "=")
			if ok {
				b.WriteString(k)
				b.WriteString("=")
			}
			if ok && Kept[k] {
				b.WriteString(v)
				continue
			}
			b.WriteString(Mask)
		}
		rest = frag
	}
	if rest != "" {
		b.WriteString("#" + Mask)
	}
	return b.String()
}

// Text returns s with every URL in it (a scheme "://" up to the next
// space, quote or angle bracket) redacted as URL does. Text that holds no
// "://" is returned as it is.
func Text(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return redactAll(s, isURLEnd)
}

// redactAll redacts every "scheme://..." token of s, a token ending where
// end says. A token that still holds a "://" after its own redaction (a
// URL glued to another one, as in "x://ahttp://u:p@h/") is redacted again:
// each pass removes one "://" from the text still to do, so it ends.
func redactAll(s string, end func(rune) bool) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		rest := s[i+3:]
		n := strings.IndexFunc(rest, end)
		if n < 0 {
			n = len(rest)
		}
		red := redactAfterScheme(rest[:n])
		if strings.Contains(red, "://") {
			red = redactAll(red, end)
		}
		b.WriteString(s[:i+3])
		b.WriteString(red)
		s = rest[n:]
	}
}

// isURLEnd reports whether r ends a URL in free text.
func isURLEnd(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>', '\\':
		return true
	}
	return r < 0x20
}

// Quoted is a value for fmt whose %q is Quote (cut at MaxQuoted bytes, its
// length shown); %s and %v print it whole. Error and finding builders wrap
// their string arguments in it so that every quoted value is bounded.
type Quoted string

// Format implements fmt.Formatter.
func (q Quoted) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		_, _ = io.WriteString(f, Quote(string(q)))
		return
	}
	_, _ = io.WriteString(f, string(q))
}

// Bound returns text with every value in it bounded as Quote bounds a
// value: each Go-quoted string ("...", as %q writes it) whose value is
// longer than MaxQuoted bytes is written again by Quote, and each other
// run of non-space text longer than MaxQuoted bytes is cut as Cut cuts it.
// It is the backstop for error text brighter does not build itself
// (cobra's and pflag's "unknown flag", "invalid argument %q for %q flag"),
// applied to the final error of a run. A value Quote already
// cut is left as it is.
func Bound(text string) string {
	if len(text) <= MaxQuoted {
		return text
	}
	var b strings.Builder
	word := 0 // start of the current run of non-space text
	flush := func(end int) {
		b.WriteString(Cut(text[word:end]))
	}
	for i := 0; i < len(text); {
		c := text[i]
		// A quoted value starts a word or follows one of ([=: (as "--to=" or
		// "(\"x\")"); a quote inside a word is not tried, so a text of many
		// quotes is scanned once.
		if c == '"' && (i == word || strings.IndexByte("([=:", text[i-1]) >= 0) {
			if q, err := strconv.QuotedPrefix(text[i:]); err == nil {
				flush(i)
				out := q
				if v, err := strconv.Unquote(q); err == nil && len(v) > MaxQuoted && !(strings.HasSuffix(v, "…") && len(v) <= MaxQuoted+len("…")) {
					out = Quote(v)
				}
				b.WriteString(out)
				i += len(q)
				word = i
				continue
			}
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			flush(i)
			b.WriteByte(c)
			word = i + 1
		}
		i++
	}
	flush(len(text))
	return b.String()
}

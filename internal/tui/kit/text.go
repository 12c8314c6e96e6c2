package kit

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Ellipsis marks where Cut cut a text.
const Ellipsis = "…"

// Cut returns s cut to at most w cells (escape sequences kept), ending in
// Ellipsis when it was cut.
func Cut(s string, w int) string { return ansi.Truncate(s, w, Ellipsis) }

// CutLines cuts every line of lines to at most w cells, in place, and
// returns lines.
func CutLines(lines []string, w int) []string {
	for i, l := range lines {
		lines[i] = Cut(l, w)
	}
	return lines
}

// Pad returns lines cut, or padded with empty lines, to exactly n lines
// (n >= 0). It may reuse the array of lines.
func Pad(lines []string, n int) []string {
	if len(lines) > n {
		lines = lines[:n]
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}

// Clamp returns cursor moved into the rows 0 to n-1 of a list of n rows;
// 0 when the list is empty.
func Clamp(cursor, n int) int {
	if n == 0 {
		return 0
	}
	return min(max(cursor, 0), n-1)
}

// Window returns the index of the first row to show when rows rows fit:
// 0 while the cursor's row is among the first rows, else the one that
// makes the cursor's row the last shown.
func Window(cursor, rows int) int {
	if cursor < rows {
		return 0
	}
	return cursor - rows + 1
}

// Wrap breaks s into lines (joined by "\n") of at most width cells, at
// spaces only: a word (a URL, a queue name with hyphens, an id) is never
// broken unless it is itself wider than width, and then it is cut into
// lines of width cells. Line breaks in s are kept.
func Wrap(s string, width int) string {
	width = max(width, 1)
	var out []string
	for para := range strings.SplitSeq(s, "\n") {
		line, lw := "", 0
		for _, w := range strings.Fields(para) {
			ww := ansi.StringWidth(w)
			switch {
			case lw == 0:
			case lw+1+ww <= width:
				line, lw = line+" "+w, lw+1+ww
				continue
			default:
				out = append(out, line)
			}
			if ww > width {
				parts := strings.Split(ansi.Hardwrap(w, width, true), "\n")
				out = append(out, parts[:len(parts)-1]...)
				w = parts[len(parts)-1]
			}
			line, lw = w, ansi.StringWidth(w)
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// CollapseSpace turns every run of white space in s (line breaks and tabs
// among it) into one space and trims both ends.
func CollapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// Visible returns s with every character that is not graphic written as
// its Go escape (strconv.QuoteRune's: ESC as \x1b, BEL as \a, a line
// break as \n, DEL as \x7f, the C1 CSI introducer as \u009b, a
// bidirectional override as \u202e) and every byte that is not UTF-8 as
// \xNN, so that text a message, a handler or a broker supplied (an id, a
// topic, a rejection message, a header or bag value, a body) never
// reaches a terminal as a control sequence: the one rule every console
// view of the dlq commands, brighter watch and consume --tui applies to
// such text (docs/security.md). Graphic text, spaces among it, is
// returned unchanged, with no allocation; a backslash is not escaped, so
// the exact text is what -o json prints.
func Visible(s string) string { return visible(s, false) }

// VisibleLines is Visible keeping line breaks (\n) and tabs as they are:
// for text shown over several lines (a body).
func VisibleLines(s string) string { return visible(s, true) }

func visible(s string, lines bool) string {
	ascii := true // printable ASCII, the common case: returned as it is
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] >= ' ' && s[i] < 0x7f
	}
	if ascii {
		return s
	}
	keep := func(r rune) bool { return unicode.IsGraphic(r) || lines && (r == '\n' || r == '\t') }
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || !keep(r) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case keep(r):
			b.WriteString(s[:n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[n:]
	}
	return b.String()
}

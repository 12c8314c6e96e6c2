// Package export is the one place that knows brighter's output formats,
// the values of -o/--output: their names, text as the default of every
// command, the aliases old scripts still use (table for text), the one
// usage error of an unknown value, and how JSON is written (WriteJSON for
// one document, Lines for JSON lines). Every command with -o declares its
// Formats here and every JSON writer of the commands goes through it, so
// that JSON looks the same wherever it comes from: two-space indents for a
// document, one compact object a line for a stream, and <, > and &
// escaped as encoding/json escapes them by default.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/redact
//
// Must not import: github.com/spf13/cobra
package export

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/brightergo/brighter/internal/redact"
)

// The output formats, by the name -o takes.
const (
	// Text is for people: lines, or a table; every command's default.
	Text = "text"
	// JSON is for programs: one document, or JSON lines for a stream.
	JSON = "json"
	// SARIF is a SARIF 2.1.0 log (lint).
	SARIF = "sarif"
	// GitHub is GitHub Actions workflow commands (lint).
	GitHub = "github"
	// Table is the old name of Text on dlq peek and stats, kept as an
	// alias there so that scripts written for it keep working.
	Table = "table"
)

// Default is the format of a command run without -o.
const Default = Text

// Formats are the values one command's -o accepts. The zero value accepts
// nothing; build one with New.
type Formats struct {
	names   []string
	aliases map[string]string
}

// New returns the formats names, with Text (the default) first whether or
// not names lists it.
func New(names ...string) Formats {
	f := Formats{names: []string{Text}}
	for _, n := range names {
		if !slices.Contains(f.names, n) {
			f.names = append(f.names, n)
		}
	}
	return f
}

// WithAlias returns f that also accepts alias as a name of format (which f
// must accept).
func (f Formats) WithAlias(alias, format string) Formats {
	if !slices.Contains(f.names, format) {
		panic(fmt.Sprintf("export: alias %q of %q, a format this command does not accept", alias, format))
	}
	aliases := map[string]string{alias: format}
	for a, t := range f.aliases {
		aliases[a] = t
	}
	f.aliases = aliases
	return f
}

// Names returns the formats' names, the default first, as the flag's help
// lists them.
func (f Formats) Names() []string { return slices.Clone(f.names) }

// Completions returns the names then the aliases, sorted, for shell
// completion.
func (f Formats) Completions() []string {
	out := f.Names()
	var aliases []string
	for a := range f.aliases {
		aliases = append(aliases, a)
	}
	slices.Sort(aliases)
	return append(out, aliases...)
}

// Usage returns the flag's help text: "output format: text, json", with
// the aliases after the names.
func (f Formats) Usage() string {
	s := "output format: " + strings.Join(f.names, ", ")
	var aliases []string
	for a, t := range f.aliases {
		aliases = append(aliases, a+": the same as "+t)
	}
	slices.Sort(aliases)
	if len(aliases) > 0 {
		s += " (" + strings.Join(aliases, ", ") + ")"
	}
	return s
}

// Parse returns the format value names, in any case, an alias resolved to
// the format it names. An unknown value is an error naming the flag and
// the valid names: --output "yaml": valid values are text, json (the value
// cut as redact.Quoted cuts it).
func (f Formats) Parse(value string) (string, error) {
	for _, n := range f.names {
		if strings.EqualFold(value, n) {
			return n, nil
		}
	}
	for a, t := range f.aliases {
		if strings.EqualFold(value, a) {
			return t, nil
		}
	}
	return "", fmt.Errorf("--output %q: valid values are %s", redact.Quoted(value), strings.Join(f.names, ", "))
}

// WriteJSON writes v to w as one JSON document indented by two spaces and
// ended by a newline. <, > and & are written as they are (the output is
// read by scripts and people, never embedded in HTML: a file named
// "<stdin>" reads as itself). Errors are v's encoding errors and w's write
// errors.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Lines writes JSON lines: one compact JSON value per line, for a stream
// of records that a script (jq) or a log shipper reads as they come.
type Lines struct {
	enc *json.Encoder
}

// NewLines returns Lines that write to w; like WriteJSON, they write <, >
// and & as they are.
func NewLines(w io.Writer) *Lines {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Lines{enc: enc}
}

// Encode writes v as one line. Errors are v's encoding errors and w's
// write errors.
func (l *Lines) Encode(v any) error { return l.enc.Encode(v) }

package export

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestParse_NamesInAnyCaseAliasesAndOneErrorText: a format is read in any
// case, an alias gives the format it names, and every other value is the
// one usage error text naming the flag, the value and the valid names
// (never the aliases).
func TestParse_NamesInAnyCaseAliasesAndOneErrorText(t *testing.T) {
	f := New(JSON).WithAlias(Table, Text)
	for in, want := range map[string]string{"text": Text, "TEXT": Text, "json": JSON, "Json": JSON, "table": Text, "TABLE": Text} {
		if got, err := f.Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := f.Parse("yaml")
	if err == nil || err.Error() != `--output "yaml": valid values are text, json` {
		t.Errorf("Parse(yaml) error = %v", err)
	}
	if _, err := New(JSON).Parse("table"); err == nil || err.Error() != `--output "table": valid values are text, json` {
		t.Errorf("table accepted where it is no alias: %v", err)
	}
	long := strings.Repeat("x", 10_000)
	if _, err := f.Parse(long); err == nil || strings.Contains(err.Error(), long) {
		t.Errorf("a long value is quoted whole: %d bytes", len(err.Error()))
	}
}

// TestNew_TextIsAlwaysTheFirstFormat: text, the default, is every
// command's first format, listed once, whatever New is given.
func TestNew_TextIsAlwaysTheFirstFormat(t *testing.T) {
	if Default != Text {
		t.Fatalf("Default = %q, want text", Default)
	}
	for _, f := range []Formats{New(), New(JSON), New(JSON, Text, SARIF), New(Text, JSON, JSON)} {
		names := f.Names()
		if names[0] != Text || slices.Index(names[1:], Text) >= 0 || !slices.Equal(slices.Compact(slices.Clone(names)), names) {
			t.Errorf("Names() = %v", names)
		}
	}
}

// TestUsageAndCompletions: the help lists the names then the aliases, and
// completion offers both (an old script's table still completes).
func TestUsageAndCompletions(t *testing.T) {
	f := New(JSON).WithAlias(Table, Text)
	if got, want := f.Usage(), "output format: text, json (table: the same as text)"; got != want {
		t.Errorf("Usage() = %q, want %q", got, want)
	}
	if got, want := New(JSON, SARIF, GitHub).Usage(), "output format: text, json, sarif, github"; got != want {
		t.Errorf("Usage() = %q, want %q", got, want)
	}
	if got, want := f.Completions(), []string{Text, JSON, Table}; !slices.Equal(got, want) {
		t.Errorf("Completions() = %v, want %v", got, want)
	}
}

// TestWithAlias_OfAnUnknownFormatPanics: an alias of a format the command
// does not accept is a programming error caught at start-up.
func TestWithAlias_OfAnUnknownFormatPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("WithAlias(table, sarif) on text, json did not panic")
		}
	}()
	New(JSON).WithAlias(Table, SARIF)
}

// TestWriteJSON_IndentedDocumentHTMLCharactersAsThemselves: a document is
// indented by two spaces, ends in a newline, and writes <, > and & as they
// are (encoding/json's default would write "<stdin>" as "\u003cstdin\u003e"),
// while a quote and a control character are still escaped.
func TestWriteJSON_IndentedDocumentHTMLCharactersAsThemselves(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, map[string]any{"a": 1, "b": []string{"x<y", "p&q", "\"\n"}}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": 1,\n  \"b\": [\n    \"x<y\",\n    \"p&q\",\n    \"\\\"\\n\"\n  ]\n}\n"
	if b.String() != want {
		t.Errorf("WriteJSON wrote %q, want %q", b.String(), want)
	}
	if err := WriteJSON(&b, func() {}); err == nil {
		t.Error("a value JSON cannot encode is not an error")
	}
}

// TestLines_OneCompactValueALine: JSON lines are compact, one a line, with
// <, > and & as they are.
func TestLines_OneCompactValueALine(t *testing.T) {
	var b bytes.Buffer
	l := NewLines(&b)
	for _, v := range []any{map[string]int{"n": 1}, []string{"a>b"}} {
		if err := l.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	if want := "{\"n\":1}\n[\"a>b\"]\n"; b.String() != want {
		t.Errorf("Lines wrote %q, want %q", b.String(), want)
	}
	if err := NewLines(failingWriter{}).Encode(1); err == nil {
		t.Error("a write error is not returned")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

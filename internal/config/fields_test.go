package config

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkKinds fails for a field of table whose Kind does not fit the Go
// field it is stored in, or that a block reads itself (no Go target)
// without being a KindBlock.
func checkKinds[T any](t *testing.T, table []field[T]) {
	t.Helper()
	want := map[reflect.Type][]Kind{
		reflect.TypeFor[*string]():            {KindText, KindEnum},
		reflect.TypeFor[*int]():               {KindInteger},
		reflect.TypeFor[*time.Duration]():     {KindDuration},
		reflect.TypeFor[*bool]():              {KindBoolean},
		reflect.TypeFor[*map[string]string](): {KindMap},
		reflect.TypeFor[*[]string]():          {KindList, KindScript},
	}
	var zero T
	for _, f := range table {
		if f.at == nil {
			if f.Kind != KindBlock {
				t.Errorf("%T.%s: %s with no Go field", zero, f.Name, f.Kind)
			}
			continue
		}
		typ := reflect.TypeOf(f.at(&zero))
		if !slices.Contains(want[typ], f.Kind) {
			t.Errorf("%T.%s: %s stored in a %v", zero, f.Name, f.Kind, typ)
		}
		if (f.Kind == KindEnum) != (len(f.Enum) > 0) {
			t.Errorf("%T.%s: %s with enum %v", zero, f.Name, f.Kind, f.Enum)
		}
		if f.def != nil && reflect.TypeOf(f.def) != typ.Elem() && typ.Elem().Kind() != reflect.String {
			t.Errorf("%T.%s: default %v (%T) for a %v", zero, f.Name, f.def, f.def, typ.Elem())
		}
	}
}

// TestFieldTable_KindsFitTheirGoFields: each field's declared kind is the
// one its Go field holds, so the table's description (Fields, the schema
// and docs checks) says what the decoder really reads.
func TestFieldTable_KindsFitTheirGoFields(t *testing.T) {
	checkKinds(t, topTable)
	checkKinds(t, connectionsTable)
	checkKinds(t, awsTable)
	checkKinds(t, gcpConnTable)
	checkKinds(t, rocketmqConnTable)
	checkKinds(t, subscriptionTable)
	checkKinds(t, handlerTable)
	checkKinds(t, tlsTable)
	checkKinds(t, sqsTable)
	checkKinds(t, redrivePolicyTable)
	checkKinds(t, gcpTable)
	checkKinds(t, deadLetterPolicyTable)
	checkKinds(t, rocketmqTable)
	checkKinds(t, memoryTable)
	for _, f := range Fields() {
		if f.Kind != KindBlock && f.GoField == "" {
			t.Errorf("%s: no Go field found for it", f.Path())
		}
		if f.PumpOption != "" && f.Block != "subscriptions[]" {
			t.Errorf("%s: only a subscription's own fields map to pump options", f.Path())
		}
	}
}

// docRow matches a row of the subscription settings table of
// docs/configuration.md: setting, default, meaning.
var docRow = regexp.MustCompile("(?m)^\\| `(\\w+)` \\| ([^|]*) \\| (.*) \\|$")

// section returns the text of doc from the heading title to the next
// heading of the same level, or "".
func section(doc, title string) string {
	i := strings.Index(doc, "\n"+title+"\n")
	if i < 0 {
		return ""
	}
	rest := doc[i+len(title)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// bullet returns the list item of text that starts "- `name`", up to the
// next item or blank line, or "".
func bullet(text, name string) string {
	i := strings.Index(text, "\n- `"+name+"`")
	if i < 0 {
		return ""
	}
	rest := text[i+1:]
	if j := strings.Index(rest[1:], "\n- "); j >= 0 {
		rest = rest[:j+1]
	}
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// sameDefault reports whether the documentation's default (backticks
// stripped) is the table's: equal text, or equal durations (60s is 1m).
func sameDefault(f Field, doc string) bool {
	doc = strings.ReplaceAll(strings.TrimSpace(doc), "`", "")
	if doc == f.Default {
		return true
	}
	if f.Kind == KindDuration {
		a, errA := time.ParseDuration(doc)
		b, errB := time.ParseDuration(f.Default)
		return errA == nil && errB == nil && a == b
	}
	return false
}

// TestFields_AreDocumented: every field of the table is in the
// documentation, with the table's default where the documentation gives
// one: a subscription's own settings are rows of docs/configuration.md's
// table (default and, for a bounded integer, its range), and every row is
// a field; the transport blocks' fields are in their item of "Transport
// blocks" (a default written "(30s" after the name is compared, for the
// transport block's own fields);
// connections' fields are in the connections example; the handler's are
// in docs/handlers.md.
func TestFields_AreDocumented(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cfg, handlers := read("../../docs/configuration.md"), read("../../docs/handlers.md")
	rows := map[string][]string{}
	for _, m := range docRow.FindAllStringSubmatch(section(cfg, "## Subscription settings"), -1) {
		rows[m[1]] = m[2:]
	}
	if len(rows) < 20 {
		t.Fatalf("found %d rows in docs/configuration.md's subscription settings; the table's shape changed", len(rows))
	}
	blocks := section(cfg, "## Transport blocks")
	conns := cfg[strings.Index(cfg, "```yaml\nconnections:"):]
	conns = conns[:strings.Index(conns, "subscriptions:")]
	word := func(text, name string) bool {
		return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(text)
	}
	inTable := map[string]bool{}
	for _, f := range Fields() {
		switch {
		case f.Block == "":
			if !strings.Contains(cfg, f.Name+":") {
				t.Errorf("%s: not in docs/configuration.md", f.Path())
			}
		case strings.HasPrefix(f.Block, "connections"):
			line := f.Name + ":"
			if f.Block != "connections" {
				_, blk, _ := strings.Cut(f.Block, ".")
				line = lineOf(conns, "  "+blk+":")
			}
			if !word(line, f.Name) {
				t.Errorf("%s: not in the connections example of docs/configuration.md", f.Path())
			}
		case f.Block == "subscriptions[]" && f.Kind == KindBlock && f.Name != "handler":
			if bullet(blocks, f.Name) == "" {
				t.Errorf("%s: no item for it in docs/configuration.md's Transport blocks", f.Path())
			}
		case f.Block == "subscriptions[]":
			inTable[f.Name] = true
			row, ok := rows[f.Name]
			if !ok {
				t.Errorf("%s: no row in docs/configuration.md's subscription settings", f.Path())
				continue
			}
			if !sameDefault(f, row[0]) {
				t.Errorf("%s: docs/configuration.md gives the default %q; the table %q", f.Path(), row[0], f.Default)
			}
			if f.Kind == KindInteger && f.Min != "" && f.Max != "" && !strings.Contains(row[1], f.Min+".."+f.Max) {
				t.Errorf("%s: docs/configuration.md does not give its range %s..%s: %q", f.Path(), f.Min, f.Max, row[1])
			}
		case strings.HasPrefix(f.Block, "subscriptions[].handler"):
			if !word(handlers, f.Name) {
				t.Errorf("%s: not in docs/handlers.md", f.Path())
			}
		default: // a transport block or a block within one
			transport := strings.Split(f.Block, ".")[1]
			item := bullet(blocks, transport)
			if !word(item, f.Name) {
				t.Errorf("%s: not in docs/configuration.md's %s item", f.Path(), transport)
				continue
			}
			if strings.Count(f.Block, ".") > 1 || f.Kind == KindEnum || f.Kind == KindText {
				continue // a nested block's names repeat its transport's (ackDeadline)
			}
			if m := regexp.MustCompile("`" + f.Name + "` \\(([^):;, ]+)").FindStringSubmatch(item); m != nil {
				if !sameDefault(f, m[1]) {
					t.Errorf("%s: docs/configuration.md gives the default %q; the table %q", f.Path(), m[1], f.Default)
				}
			}
		}
	}
	for name := range rows {
		if !inTable[name] {
			t.Errorf("docs/configuration.md documents %s, which is no subscription field", name)
		}
	}
}

// lineOf returns the line of text that starts with prefix, or "".
func lineOf(text, prefix string) string {
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

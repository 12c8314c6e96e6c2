package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// mergedFile keeps its defaults in an extension field and merges them
// into two subscriptions: "overriding" sets requeueCount and channelName
// itself, "merged" takes them, and both take the handler.
const mergedFile = `x-defaults: &d
  transport: sqs
  requeueCount: 0
  channelName: orders-in
  handler:
    type: http
    url: http://localhost:8080/h
    timeout: 2m
subscriptions:
  - <<: *d
    name: overriding
    requeueCount: 5
    channelName: overriding-in
  - <<: *d
    name: merged
`

// TestMergeKeys_PositionsPointAtTheLineToEdit: a key a subscription sets
// over a merge key (<<) is at its own line, however the merge comes
// first; a key the merge brings in is at the anchored mapping's line, and
// Merged says so, for the keys under it too.
func TestMergeKeys_PositionsPointAtTheLineToEdit(t *testing.T) {
	f, err := config.Parse("m.yaml", []byte(mergedFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	over, merged := f.Subscriptions[0], f.Subscriptions[1]
	if over.RequeueCount != 5 || merged.RequeueCount != 0 || over.ChannelName != "overriding-in" || merged.ChannelName != "orders-in" || merged.Handler.Timeout.String() != "2m0s" {
		t.Fatalf("the merge did not decode as written: %+v\n%+v", over, merged)
	}
	for _, c := range []struct {
		s         *config.Subscription
		field     string
		line, col int
		viaMerge  bool
	}{
		{over, "requeueCount", 12, 5, false},
		{over, "channelName", 13, 5, false},
		{over, "name", 11, 5, false},
		{over, "transport", 2, 3, true},
		{over, "handler.timeout", 8, 5, true},
		{merged, "requeueCount", 3, 3, true},
		{merged, "channelName", 4, 3, true},
		{merged, "handler.url", 7, 5, true},
		{merged, "name", 15, 5, false},
		{merged, "bufferSize", 14, 5, false}, // not set: the subscription itself
	} {
		p := c.s.Pos(c.field)
		if p.Line != c.line || p.Column != c.col {
			t.Errorf("%s %s at %d:%d, want %d:%d", c.s.Name, c.field, p.Line, p.Column, c.line, c.col)
		}
		if got := c.s.Merged(c.field); got != c.viaMerge {
			t.Errorf("%s %s: Merged = %v, want %v", c.s.Name, c.field, got, c.viaMerge)
		}
	}
	if got := f.Pos("subscriptions[0].requeueCount"); got.Line != 12 {
		t.Errorf("File.Pos of the overriding key: line %d, want 12", got.Line)
	}
}

// TestMergeKeys_ErrorsPointAtTheLineToEdit: consume's configuration
// errors point at the key a subscription overrides the merge with when
// the value is its own (the brokers' name rules, judged after the walk,
// too), and at the anchored mapping, saying it came through <<, when the
// merge brought it in; an error about the merge keys themselves says no
// more.
func TestMergeKeys_ErrorsPointAtTheLineToEdit(t *testing.T) {
	src := `x-defaults: &d
  transport: sqs
  bufferSize: 11
  channelName: "bad name!"
  handler: {type: builtin, name: ack}
subscriptions:
  - <<: *d
    name: a
    bufferSize: 5
    channelName: "also bad!"
  - <<: *d
    name: b
`
	_, err := config.Parse("e.yaml", []byte(src), nil)
	var es config.Errors
	if !errors.As(err, &es) {
		t.Fatalf("want config.Errors, got %v", err)
	}
	got := err.Error()
	for _, want := range []string{
		`e.yaml:10:5: subscriptions[0].channelName: "also bad!": an SQS queue name may hold only letters, digits, '-', '_' and '.' (which becomes '_'); ' ' is not allowed` + "\n",
		`e.yaml:3:15: subscriptions[1].bufferSize: 11 is out of range; valid values are 1..10` + config.MergedNote,
		`e.yaml:4:3: subscriptions[1].channelName: "bad name!": an SQS queue name may hold only letters, digits, '-', '_' and '.' (which becomes '_'); ' ' is not allowed` + config.MergedNote,
	} {
		if !strings.Contains(got+"\n", want) {
			t.Errorf("errors do not hold\n%s\ngot:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "subscriptions[0]"); n != 1 {
		t.Errorf("subscription a's own values give %d errors, want 1 (its bufferSize 5 overrides the anchor's 11):\n%s", n, got)
	}
	// A key the anchored mapping does not know is reported there, as
	// merged, with the note for an unknown field: no override in the
	// subscription can make it known, it is removed or renamed in the
	// anchor. So is one of a mapping the merge key brings in whole.
	for _, u := range []struct{ yaml, want string }{
		{"x-d: &d {transport: memory, bogus: 1, handler: {type: builtin, name: ack}}\nsubscriptions:\n  - <<: *d\n    name: a\n",
			`u.yaml:1:29: subscriptions[0].bogus: unknown field "bogus"`},
		{"x-d: &d {transport: memory, handler: {type: builtin, name: ack, bogus: 1}}\nsubscriptions:\n  - <<: *d\n    name: a\n",
			`subscriptions[0].handler.bogus: unknown field "bogus"`},
	} {
		_, err = config.Parse("u.yaml", []byte(u.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), u.want) || !strings.HasSuffix(err.Error(), config.MergedUnknownNote) {
			t.Errorf("an unknown key of the anchor: %v\nwant %s ... %s", err, u.want, config.MergedUnknownNote)
		}
		if err != nil && strings.Contains(err.Error(), "override it") {
			t.Errorf("an unknown key is told to be overridden in the subscription: %v", err)
		}
	}
	// A merge key's own limit is not a value to edit in the anchor.
	chain := "x-a: &a {<<: *a}\nsubscriptions:\n  - <<: *a\n    name: a\n    transport: memory\n    handler: {type: builtin, name: ack}\n"
	if _, err := config.Parse("c.yaml", []byte(chain), nil); err == nil || !strings.Contains(err.Error(), "nest deeper") || strings.Contains(err.Error(), config.MergedNote) {
		t.Errorf("a merge chain: %v", err)
	}
}

// TestExtensionFields_TopLevelXKeysIgnoredAnchorHoldersRefused: a top-level key
// starting with x- is read by nothing, whatever it holds; a top-level key that
// holds an anchor and is not one is refused with the prefix suggested; x- is no
// extension below the top level.
func TestExtensionFields_TopLevelXKeysIgnoredAnchorHoldersRefused(t *testing.T) {
	ok := "x-defaults: &d {transport: memory, handler: {type: builtin, name: ack}}\nx-notes: [1, {a: b}]\nx-:\nsubscriptions:\n  - <<: *d\n    name: a\n"
	f, err := config.Parse("x.yaml", []byte(ok), nil)
	if err != nil || len(f.Subscriptions) != 1 || f.Subscriptions[0].Transport != config.TransportMemory {
		t.Fatalf("extension fields: %v", err)
	}
	for src, want := range map[string]string{
		"defaults: &d {transport: memory}\nsubscriptions: []\n":       `x.yaml:1:1: defaults: unknown field "defaults"; valid fields are connections, subscriptions; a block kept only for its anchor (&d) goes under a top-level key starting with x- (x-defaults), which brighter ignores`,
		"defaults:\n  sqs: &s {queueType: fifo}\nsubscriptions: []\n": `(&s) goes under a top-level key starting with x- (x-defaults)`,
		"connection: &c {}\nsubscriptions: []\n":                      `unknown field "connection"; did you mean "connections"?; a block kept only for its anchor (&c) goes under a top-level key starting with x- (x-connection)`,
		"defaults: {transport: memory}\nsubscriptions: []\n":          `unknown field "defaults"; valid fields are connections, subscriptions` + "\n",
	} {
		_, err := config.Parse("x.yaml", []byte(src), nil)
		if err == nil || !strings.Contains(err.Error()+"\n", want) {
			t.Errorf("%q: got %v, want %s", src, err, want)
		}
	}
}

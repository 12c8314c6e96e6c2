package config

import (
	"fmt"
	"strings"
	"testing"
)

// nested is a mapping nested depth deep, one key a line, whose last value
// sits on lines of its own after an anchor and a tag: goccy/go-yaml's
// tokens nest three deeper than the tree's mappings.
func nested(depth int) string {
	var b strings.Builder
	for i := range depth {
		fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", 2*i), i)
	}
	ind := strings.Repeat(" ", 2*depth)
	fmt.Fprintf(&b, "%s&a\n%s  !!str\n%s    v\n", ind, ind, ind)
	return string(b.String())
}

// The token limits (MaxTokens, MaxScalarSize, MaxNestingDepth) are counted
// on goccy/go-yaml's tokens, as before, whenever the tree says one may be
// exceeded, and a file over one is refused with the message and position
// it had: more than MaxTokens tokens under MaxPreScan marks, a comment
// over MaxScalarSize (no node holds it), tokens nesting deeper than the
// tree. A large honest file does not need the count.
func TestTokenLimitsAreCountedWhenTheTreeMayExceedThem(t *testing.T) {
	for name, c := range map[string]struct{ src, want string }{
		"1,200,000 tokens": {"subscriptions: [" + strings.Repeat("a,", 600_000) + "]\n",
			"t.yaml:1:1000014: the file holds more than 1000000 YAML tokens"},
		"a comment of 1 MiB + 1": {"subscriptions: []\n#" + strings.Repeat("c", MaxScalarSize+1) + "\n",
			"t.yaml:2:1: a value of 1048577 bytes starts here, over the limit of 1048576 bytes (1 MiB) for one value"},
		"tokens 33 deep, the tree 30": {nested(30),
			"t.yaml:33:65: mappings and sequences nest deeper than the limit of 32 levels here"},
	} {
		_, err := Parse("t.yaml", []byte(c.src), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %.300v\nwant %s", name, err, c.want)
		}
	}
	if _, err := Parse("t.yaml", []byte(nested(26)), nil); err != nil && strings.Contains(err.Error(), "nest deeper") {
		t.Errorf("tokens 29 deep refused: %v", err)
	}
	var b strings.Builder
	b.WriteString("subscriptions:\n")
	for i := range 10_000 {
		fmt.Fprintf(&b, "  - {name: s%d, transport: memory, handler: {type: builtin, name: ack}}\n", i)
	}
	data := []byte(b.String())
	marks, _ := preScan(data, MaxPreScan)
	docs, err := parseV3(data)
	if err != nil {
		t.Fatal(err)
	}
	if s := surveyDocs(docs, newLineIndex(data)); needsTokenCheck(marks, s) {
		t.Errorf("10,000 subscriptions need the token count: %d marks, span %d, depth %d", marks, s.span, s.depth)
	}
}

// FuzzTokenChecksRunWhenNeeded checks that whenever goccy/go-yaml's tokens
// exceed a limit of a file yaml/v3 accepts, needsTokenCheck says so: the
// bounds on the tree never let a file the token limits refused through.
func FuzzTokenChecksRunWhenNeeded(f *testing.F) {
	for _, s := range []string{nested(29), nested(30), "a: " + strings.Repeat("[", 33) + strings.Repeat("]", 33),
		strings.Repeat("- ", 34) + "x\n", "a:\n  - b:\n    - c:\n      - d: e\n", "? a\n: b\n", "a: |\n  x\n   y\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		data := []byte(src)
		marks, le := fileLimits(data)
		if le != nil {
			return
		}
		docs, err := parseV3(data)
		if err != nil {
			return
		}
		if le := tokenLimits(data); le != nil && !needsTokenCheck(marks, surveyDocs(docs, newLineIndex(data))) {
			t.Fatalf("the tokens exceed a limit (%d:%d: %s) and the tree's bounds did not say so", le.line, le.col, le.msg)
		}
	})
}

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/token"
)

// The pre-scan that refuses a file before the lexer runs counts at least the
// tokens the lexer makes, so that it refuses nothing the exact count
// (MaxTokens, after the lexer) would accept, given its margin of 2x: on the
// examples, the hostile corpus, and YAML with anchors, aliases, tags,
// comments, quotes, block scalars and flow collections.
func TestPreScanCountsNoFewerTokensThanTheLexer(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	hostile, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.yaml"))
	srcs := map[string]string{
		"anchors":  "a: &x {b: 1}\nc: *x\nd:\n  <<: *x\n  e: !!str 5\n",
		"comments": "# a comment of several words\na: b # trailing\n#\n  # indented\n",
		"quotes":   "a: 'one two three'\nb: \"four: five, six\"\nc: 'x''y'\n",
		"block":    "a: |\n  line one\n  line two: with colon\nb: >-\n  folded text\n",
		"flow":     "a: [b, c, {d: e, f: [g]}]\nh: {i: j}\n- k\n- - l\n",
		"document": "%YAML 1.2\n---\na: b\n...\n---\nc: d\n",
		"colons":   "url: http://x:80/y\nk:v\nt: 12:30\n",
	}
	for _, p := range append(files, hostile...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		srcs[p] = string(b)
	}
	if len(srcs) < 20 {
		t.Fatalf("only %d inputs", len(srcs))
	}
	for name, src := range srcs {
		lexed := len(lexer.Tokenize(src))
		if lexed == 0 {
			continue
		}
		// More than lexed-1 places counted: at least lexed.
		if at := preScanTokens([]byte(src), lexed-1); at < 0 {
			t.Errorf("%s: the pre-scan counts fewer than the lexer's %d tokens", name, lexed)
		}
	}
}

// The exact limit: MaxTokens tokens pass, one more is refused at the first
// token over it.
func TestTokenLimitAtTheTokenOverIt(t *testing.T) {
	tk := &token.Token{Type: token.StringType, Value: "a", Position: &token.Position{Line: 1, Column: 1}}
	over := &token.Token{Type: token.StringType, Value: "b", Position: &token.Position{Line: 7, Column: 3}}
	tokens := make(token.Tokens, MaxTokens, MaxTokens+1)
	for i := range tokens {
		tokens[i] = tk
	}
	if le := checkTokens(tokens); le != nil {
		t.Fatalf("%d tokens refused: %s", MaxTokens, le.msg)
	}
	le := checkTokens(append(tokens, over))
	if le == nil || le.line != 7 || le.col != 3 || !strings.Contains(le.msg, "more than 1000000 YAML tokens") {
		t.Fatalf("%d tokens: %+v, want refused at 7:3", MaxTokens+1, le)
	}
}

// FuzzPreScanAtLeastTheLexer checks on arbitrary input that the pre-scan
// counts no fewer tokens than the lexer makes: otherwise a file could pass
// the pre-scan and still make the lexer keep more than MaxPreScan tokens.
func FuzzPreScanAtLeastTheLexer(f *testing.F) {
	for _, s := range []string{"a: b\n", "- [a, {b: c}]\n", "a: &x 1\nb: *x\n", "# c\n", "'a b': \"c d\"\n", "%YAML 1.2\n---\n", "\"\"\"\"0", "a: |\n  \"\nb: [[c]]\n", " |\n ", "...0", "0:\n\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if lexed := len(lexer.Tokenize(src)); lexed > 0 && preScanTokens([]byte(src), lexed-1) < 0 {
			t.Fatalf("the pre-scan counts fewer than the lexer's %d tokens", lexed)
		}
	})
}

package config

import (
	"bytes"
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Limits of a subscriptions file (docs/configuration.md "Limits"). They
// bound what a hostile file costs without refusing a large honest one (a
// file of 10,000 subscriptions is 1.5 to 3 MB and about 400,000 tokens).
// The limits are those of goccy/go-yaml's tokens: that library keeps every
// token (about 300 bytes each) and every node (about 1 KB a token in all),
// and its parser is quadratic in nesting depth (40 KB of nested flow
// sequences took 676 MB); its lexer is linear but lexes the whole file at
// once. So a linear pre-scan that allocates nothing bounds the tokens
// before any parser runs, and the lexer's tokens are checked for count,
// depth and size before goccy/go-yaml's parser sees them (parseYAML: lint
// --infra's files, and a subscriptions file go.yaml.in/yaml/v3 refuses).
// A subscriptions file yaml/v3 accepts (its tree costs a third of
// goccy/go-yaml's, and its parser refuses nesting past 10,000 levels) has
// its tokens counted by goccy/go-yaml's lexer only when a bound on that
// tree says a limit may be exceeded (needsTokenCheck: the pre-scan over
// MaxTokens, a stretch of text over MaxScalarSize without a node, nesting
// within 4 levels of MaxNestingDepth), so the same files are refused with
// the same errors, and a large honest file is never lexed twice. Aliases
// are bounded by what they bring in as they are resolved.
const (
	// MaxFileSize is the largest subscriptions file Parse accepts, in bytes
	// (16 MiB; 10,000 subscriptions take 1.5 to 3 MB).
	MaxFileSize = 16 << 20
	// MaxTokens is the most YAML tokens (keys, values, comments and
	// punctuation such as '-', ':', '[') a file may hold: 1,000,000, where
	// 10,000 subscriptions hold about 400,000. The tokens are goccy/go-yaml's
	// lexer's, counted, before yaml/v3 parses the file, when the pre-scan
	// finds more than MaxTokens places a token can start (never fewer than
	// the tokens).
	MaxTokens = 1_000_000
	// MaxPreScan is the most places a token can start (preScanTokens) a file
	// may hold, counted before the lexer runs: three times MaxTokens, as the
	// pre-scan counts each word of a comment or quoted text and each part of
	// a name like "orders-dlq" (a large file of subscriptions counts about
	// 1.3 times its tokens, a small one heavy with comments about 3.5).
	MaxPreScan = 3 * MaxTokens
	// MaxScalarSize is the longest single value (a key, a plain, quoted or
	// block scalar, a comment) Parse accepts, in bytes: 1 MiB, as
	// goccy/go-yaml's lexer holds it (escapes decoded), counted when the
	// lines from one node of the tree to the next span more.
	MaxScalarSize = 1 << 20
	// MaxNestingDepth is the deepest nesting of mappings and sequences,
	// block or flow, Parse accepts (a real file nests about 6 deep:
	// subscriptions, an item, handler, env, ...), as goccy/go-yaml's tokens
	// nest (a value on a line of its own counts one more), counted when the
	// tree nests more than MaxNestingDepth-4 deep; merge keys (<<) may also
	// nest this deep, each merging a mapping that holds another.
	MaxNestingDepth = 32
	// MaxAliasNodes bounds what aliases and merge keys bring in: each use
	// counts the nodes of what it refers to (at least 1; the nodes
	// goccy/go-yaml's tree held: treeSize), and a file may
	// spend 1,000,000 (10,000 subscriptions that each merge a subscription
	// of defaults, 28 nodes, spend about 290,000). An alias bomb ends at
	// the use that spends it, so decoding costs at most the file's own
	// nodes plus this many.
	MaxAliasNodes = 1_000_000
)

// utf8BOM is the byte-order mark some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// parseYAML checks the limits and parses data (the BOM already stripped)
// into a syntax tree. A limit exceeded is returned as a limitError with its
// position; a parser panic is returned as an error.
func parseYAML(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("the YAML parser failed on this input: %v", r)
		}
	}()
	if _, le := fileLimits(data); le != nil {
		return nil, le
	}
	tokens := lexer.Tokenize(string(data))
	if le := checkTokens(tokens); le != nil {
		return nil, le
	}
	return parser.Parse(tokens, 0)
}

// fileLimits checks the limits read from data's bytes before any parser
// runs: MaxFileSize, then MaxPreScan. It returns the pre-scan's count
// (preScan), never under the lexer's tokens.
func fileLimits(data []byte) (marks int, le *limitError) {
	if len(data) > MaxFileSize {
		line := 1 + bytes.Count(data[:MaxFileSize], []byte{'\n'})
		return 0, &limitError{line: line, col: 1, msg: fmt.Sprintf("the file is %d bytes, over the limit of %d bytes (%d MiB) for a subscriptions file", len(data), MaxFileSize, MaxFileSize>>20)}
	}
	marks, at := preScan(data, MaxPreScan)
	if at >= 0 {
		line, col := lineCol(data, at)
		return marks, &limitError{line: line, col: col, msg: fmt.Sprintf("the file has more than %d words and punctuation marks, over three times the limit of %d YAML tokens for a subscriptions file; the ones from here on are over it", MaxPreScan, MaxTokens)}
	}
	return marks, nil
}

// tooManyTokens is the message of a file over MaxTokens.
var tooManyTokens = fmt.Sprintf("the file holds more than %d YAML tokens (keys, values, comments and punctuation), the limit for a subscriptions file; the tokens from here on are over it", MaxTokens)

// limitError is a limit of the file exceeded, at line:col.
type limitError struct {
	line, col int
	msg       string
}

func (e *limitError) Error() string { return e.msg }

// limitAt returns a limitError at tk's position.
func limitAt(tk *token.Token, msg string) *limitError {
	line, col := 1, 1
	if tk != nil && tk.Position != nil {
		line, col = tk.Position.Line, tk.Position.Column
	}
	return &limitError{line: line, col: col, msg: msg}
}

// checkTokens returns the first limit the tokens exceed, in file order:
// MaxTokens, MaxScalarSize or MaxNestingDepth; nil when none is.
func checkTokens(tokens token.Tokens) *limitError {
	var depth nesting
	for i, tk := range tokens {
		if i == MaxTokens {
			return limitAt(tk, tooManyTokens)
		}
		if tk == nil || tk.Position == nil {
			continue
		}
		if n := len(tk.Value); n > MaxScalarSize {
			return limitAt(tk, fmt.Sprintf("a value of %d bytes starts here, over the limit of %d bytes (%d MiB) for one value", n, MaxScalarSize, MaxScalarSize>>20))
		}
		if depth.add(tk) > MaxNestingDepth {
			return limitAt(tk, fmt.Sprintf("mappings and sequences nest deeper than the limit of %d levels here", MaxNestingDepth))
		}
	}
	return nil
}

// nesting follows the nesting of mappings and sequences token by token.
// Flow collections count by their brackets; block collections by an
// indentation stack over the column of the first token of each line and of
// each sequence entry ("- - -" nests three deep on one line). It reads the
// library's own tokens, so it sees quoted scalars, comments and block
// scalars exactly as the parser will.
type nesting struct {
	flow     int
	indents  []int
	lastLine int
}

// add takes the next token and returns the depth at it.
func (n *nesting) add(tk *token.Token) int {
	switch tk.Type {
	case token.CommentType:
		return len(n.indents) + n.flow
	case token.DocumentHeaderType, token.DocumentEndType:
		n.flow, n.indents, n.lastLine = 0, n.indents[:0], tk.Position.Line
		return 0
	case token.SequenceStartType, token.MappingStartType:
		n.flow++
	case token.SequenceEndType, token.MappingEndType:
		n.flow = max(n.flow-1, 0)
	}
	first := tk.Position.Line != n.lastLine
	n.lastLine = tk.Position.Line
	if n.flow == 0 || (n.flow == 1 && (tk.Type == token.SequenceStartType || tk.Type == token.MappingStartType)) {
		if first || tk.Type == token.SequenceEntryType {
			col := tk.Position.Column
			for len(n.indents) > 0 && n.indents[len(n.indents)-1] >= col {
				n.indents = n.indents[:len(n.indents)-1]
			}
			n.indents = append(n.indents, col)
		}
	}
	return len(n.indents) + n.flow
}

// preScanTokens counts, in one pass over data and without allocating, every
// byte where a YAML token can start: a byte that is not white space and is
// the first of the file, follows white space, is a YAML indicator or
// follows one, '|' and '>' counting two (a block scalar's content is a
// token even when empty), and every tab (the lexer makes an invalid token of
// a tab in indentation). Every token the lexer makes starts at such a
// byte or is that content, so the
// count is never under the lexer's (TestPreScanCountsNoFewerTokensThanTheLexer,
// FuzzPreScanAtLeastTheLexer); it is over it for words holding indicators
// ("orders-dlq" counts three) and for text of several words in comments,
// quotes and block scalars. It returns the offset of the byte that takes
// the count over limit, or -1.
func preScanTokens(data []byte, limit int) int {
	_, at := preScan(data, limit)
	return at
}

// preScan is preScanTokens that also returns the count (up to the byte
// that takes it over limit).
func preScan(data []byte, limit int) (n, at int) {
	prev := byte(' ')
	for i, c := range data {
		if !isBlank(c) && (isBlank(prev) || isIndicator(c) || isIndicator(prev)) {
			n++
			if c == '|' || c == '>' {
				n++ // a block scalar's content, a token even when empty
			}
		} else if c == '\t' {
			n++ // a tab where the lexer wants indentation is an invalid token
		}
		if n > limit {
			return n, i
		}
		prev = c
	}
	return n, -1
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isIndicator reports whether c is one of YAML's indicator characters, or
// '.' (of the document end marker "...").
func isIndicator(c byte) bool { return indicators[c] }

// indicators holds, by byte, whether it is an indicator for isIndicator:
// a table, as the pre-scan asks once or twice for every byte of the file.
var indicators = func() (t [256]bool) {
	for _, c := range []byte("-?:,[]{}#&*!|>'\"%@`.") {
		t[c] = true
	}
	return t
}()

// lineCol returns the 1-based line and column (in bytes) of offset at.
func lineCol(data []byte, at int) (line, col int) {
	line = 1 + bytes.Count(data[:at], []byte{'\n'})
	return line, at - bytes.LastIndexByte(data[:at], '\n')
}

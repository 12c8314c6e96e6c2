package config

import (
	"bytes"
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Limits of a subscriptions file, checked before the YAML is parsed
// (docs/configuration.md "Limits"). The YAML library's parser is
// quadratic in nesting depth (a 40 KB file of nested flow sequences took
// 676 MB); its lexer is linear, so the file is tokenised first and refused
// when it is too big or too deep, before the parser sees it.
const (
	// MaxFileSize is the largest subscriptions file Parse accepts, in bytes
	// (256 KiB: a file of a hundred subscriptions is about 30 KB).
	MaxFileSize = 256 << 10
	// MaxNestingDepth is the deepest nesting of mappings and sequences,
	// block or flow, Parse accepts (a real file nests about 6 deep:
	// subscriptions, an item, handler, env, ...).
	MaxNestingDepth = 32
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
	if len(data) > MaxFileSize {
		line := 1 + bytes.Count(data[:MaxFileSize], []byte{'\n'})
		return nil, &limitError{line: line, col: 1, msg: fmt.Sprintf("the file is %d bytes, over the limit of %d bytes (%d KiB) for a subscriptions file", len(data), MaxFileSize, MaxFileSize>>10)}
	}
	tokens := lexer.Tokenize(string(data))
	if tk := tooDeep(tokens); tk != nil {
		line, col := 1, 1
		if tk.Position != nil {
			line, col = tk.Position.Line, tk.Position.Column
		}
		return nil, &limitError{line: line, col: col, msg: fmt.Sprintf("mappings and sequences nest deeper than the limit of %d levels here", MaxNestingDepth)}
	}
	return parser.Parse(tokens, 0)
}

// limitError is a limit of the file exceeded, at line:col.
type limitError struct {
	line, col int
	msg       string
}

func (e *limitError) Error() string { return e.msg }

// tooDeep returns the first token at which the nesting of mappings and
// sequences exceeds MaxNestingDepth, or nil. Flow collections count by their
// brackets; block collections by an indentation stack over the column of
// the first token of each line and of each sequence entry ("- - -" nests
// three deep on one line). It reads the library's own tokens, so it sees
// quoted scalars, comments and block scalars exactly as the parser will.
func tooDeep(tokens token.Tokens) *token.Token {
	flow := 0
	var indents []int
	lastLine := 0
	for _, tk := range tokens {
		if tk == nil || tk.Position == nil {
			continue
		}
		switch tk.Type {
		case token.CommentType:
			continue
		case token.DocumentHeaderType, token.DocumentEndType:
			flow, indents, lastLine = 0, indents[:0], tk.Position.Line
			continue
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
		}
		first := tk.Position.Line != lastLine
		lastLine = tk.Position.Line
		if flow == 0 || (flow == 1 && (tk.Type == token.SequenceStartType || tk.Type == token.MappingStartType)) {
			if first || tk.Type == token.SequenceEntryType {
				col := tk.Position.Column
				for len(indents) > 0 && indents[len(indents)-1] >= col {
					indents = indents[:len(indents)-1]
				}
				indents = append(indents, col)
			}
		}
		if len(indents)+flow > MaxNestingDepth {
			return tk
		}
	}
	return nil
}

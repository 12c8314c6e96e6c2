package config

import (
	"bytes"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
	yaml "go.yaml.in/yaml/v3"
)

// The subscriptions file's decoder reads go.yaml.in/yaml/v3's yaml.Node
// tree as it read goccy/go-yaml's: these helpers type a node's value, give
// its position and count its nodes the way goccy/go-yaml did, so that what
// a file means, and where its errors point, did not change.

// typeOf returns the type goccy/go-yaml gave n's value. A scalar is typed by
// its text as goccy/go-yaml's lexer typed it (YAML 1.2's core schema, with
// its own reading of numbers): quoted, it is a string; a block scalar (|
// or >) is a literal; after a tag goccy/go-yaml does not know (!foo, not
// !!str), a string; otherwise plainType of its text. yaml/v3's own tags
// (Node.Tag) are not used: they follow YAML 1.1 in places (1e3 is a float
// there, a string here; 2001-12-14 a timestamp there).
func typeOf(n *yaml.Node) ast.NodeType {
	switch n.Kind {
	case yaml.MappingNode:
		return ast.MappingType
	case yaml.SequenceNode:
		return ast.SequenceType
	case yaml.AliasNode:
		return ast.AliasType
	case yaml.DocumentNode:
		return ast.DocumentType
	}
	switch {
	case isPatchedAlias(n):
		return ast.AliasType
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return ast.LiteralType
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		return ast.StringType
	case n.Style&yaml.TaggedStyle != 0 && n.Value != "" && !goccyTag(n.Tag):
		return ast.StringType
	}
	return plainType(n.Value)
}

// isMergeKey reports whether the key k is a merge key: << written plain,
// as goccy/go-yaml's lexer made one.
func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && typeOf(k) == ast.StringType &&
		k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0
}

// goccyTag reports whether tag is one of the tags goccy/go-yaml knows
// (!!str, !!int, !!map, ...), after which a scalar keeps the type of its
// text.
func goccyTag(tag string) bool {
	_, ok := token.ReservedTagKeywordMap[token.ReservedTagKeyword(tag)]
	return ok
}

// plainType types the text of a plain scalar as goccy/go-yaml's lexer did
// (token.New): null, ~ and empty are null; true and false in three
// spellings booleans (yes, no, on, off are strings); .inf and .nan in three
// spellings, with - for .inf, infinities and NaNs; a number
// by token.ToNumber (0755 and 0o755 octal, 0x1F, 0b101, 1_000 integers, 1.5
// and .5 floats, 1e3 a string); anything else a string. A plain scalar of
// several lines, folded to one, holds a space, and so is a string as
// goccy/go-yaml made it.
func plainType(s string) ast.NodeType {
	switch s {
	case "", "null", "Null", "NULL", "~":
		return ast.NullType
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return ast.BoolType
	case ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF":
		return ast.InfinityType
	case ".nan", ".NaN", ".NAN":
		return ast.NanType
	}
	// token.ToNumber takes only a digit, a sign or a dot first; asking it
	// of every name would cost an error value each (strconv's).
	if c := s[0]; c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.' {
		if num := token.ToNumber(s); num != nil {
			if num.Type == token.NumberTypeFloat {
				return ast.FloatType
			}
			return ast.IntegerType
		}
	}
	return ast.StringType
}

// kindOf names n's YAML kind for error messages, as NodeKind names a
// goccy/go-yaml node's ("nothing" for nil).
func kindOf(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	return typeName(typeOf(n))
}

// treeBudget is the alias budget of a subscriptions file (MaxAliasNodes):
// AliasBudget's rule, on yaml/v3's tree, with each use charged the nodes
// goccy/go-yaml's tree held for it (treeSize).
type treeBudget struct {
	left  int
	sizes map[*yaml.Node]int
}

func newTreeBudget() *treeBudget {
	return &treeBudget{left: MaxAliasNodes, sizes: map[*yaml.Node]int{}}
}

// spend charges one use of target (an anchored node; nil for a merge key,
// which costs 1) and reports whether the budget still holds. Once it
// returns false it keeps returning false.
func (b *treeBudget) spend(target *yaml.Node) bool {
	cost := 1
	if target != nil {
		c, ok := b.sizes[target]
		if !ok {
			c = max(treeSize(target, true), 1)
			b.sizes[target] = c
		}
		cost = c
	}
	b.left -= cost
	return b.left >= 0
}

// treeSize counts the nodes goccy/go-yaml's tree held for n, as ast.Walk
// visits them: one for each value, and one more for each key: value pair,
// anchor and its name, tag, alias name and block scalar's text. top leaves
// out n's own anchor (an alias brings in what the anchor names, not the
// anchor).
func treeSize(n *yaml.Node, top bool) int {
	c := 1
	if n.Anchor != "" && !top {
		c += 2
	}
	if n.Style&yaml.TaggedStyle != 0 {
		c++
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || isPatchedAlias(n) {
			c++
		}
	case yaml.AliasNode:
		c++
	case yaml.MappingNode:
		c += len(n.Content) / 2
		fallthrough
	default:
		for _, k := range n.Content {
			c += treeSize(k, false)
		}
	}
	return c
}

// lineIndex finds the lines of a file's text.
type lineIndex struct {
	src    []byte
	starts []int // starts[i] is the offset of line i+1
}

func newLineIndex(src []byte) *lineIndex {
	starts := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		starts = append(starts, i)
	}
	return &lineIndex{src: src, starts: starts}
}

// count is the number of lines.
func (l *lineIndex) count() int { return len(l.starts) }

// start is the offset where line starts (the text's length past the last).
func (l *lineIndex) start(line int) int {
	if line >= 1 && line <= len(l.starts) {
		return l.starts[line-1]
	}
	return len(l.src)
}

// end is the offset just past line, its line feed included.
func (l *lineIndex) end(line int) int { return l.start(line + 1) }

// offset is the offset of the character at line and column (1-based, in
// characters).
func (l *lineIndex) offset(line, col int) int {
	off, end := l.start(line), l.end(line)
	for ; col > 1 && off < end; col-- {
		_, size := utf8.DecodeRune(l.src[off:end])
		off += size
	}
	return off
}

// goccyColumn converts yaml/v3's column on line (in characters) to
// goccy/go-yaml's, which counts no tab.
func (d *decoder) goccyColumn(line, col int) int {
	if !d.tabs {
		return col
	}
	off := d.lines.start(line)
	tabs := bytes.Count(d.lines.src[off:d.lines.offset(line, col)], []byte{'\t'})
	return col - tabs
}

// valueStart returns where n's value starts, past its anchor and tag (and
// the blanks, line ends and comments after them): the position of the
// value node in goccy/go-yaml's tree, in yaml/v3's columns. goccy/go-yaml
// put a value that follows a tag on its line one column early, and an
// empty value one column past the start of its anchor or tag; so does
// valueStart.
func (d *decoder) valueStart(n *yaml.Node) (line, col int) {
	if n.Kind == yaml.ScalarNode && n.Value == "" && n.Style&^yaml.TaggedStyle == 0 {
		return n.Line, n.Column + 1
	}
	src := d.lines.src
	line = n.Line
	lineStart := d.lines.start(line)
	off := d.lines.offset(n.Line, n.Column)
	tagged := false
loop:
	for off < len(src) {
		switch c := src[off]; c {
		case ' ', '\t', '\r':
			off++
		case '\n':
			off++
			line++
			lineStart = off
			tagged = false
		case '#':
			for off < len(src) && src[off] != '\n' {
				off++
			}
		case '&', '!':
			tagged = c == '!'
			for off < len(src) && !isBlank(src[off]) && !isFlowIndicator(src[off]) {
				off++
			}
		default:
			break loop
		}
	}
	col = 1 + utf8.RuneCount(src[lineStart:off])
	if tagged {
		col--
	}
	return line, col
}

// emptyAtEnd is 1 when n is an empty value with nothing after it in the
// file but blanks or a comment on its line ("key: " on the last line):
// goccy/go-yaml put that value a column past yaml/v3's. It is 0 otherwise.
func (d *decoder) emptyAtEnd(n *yaml.Node) int {
	if n != d.last || n.Kind != yaml.ScalarNode || n.Value != "" || n.Style != 0 {
		return 0
	}
	if off := d.lines.offset(n.Line, n.Column); off < len(d.lines.src) && (isBlank(d.lines.src[off]) && d.lines.src[off] != '\n' || d.lines.src[off] == '#') {
		return 1
	}
	return 0
}

// trailingSpaces is how many spaces follow the plain scalar n to the end
// of its line: goccy/go-yaml put such a value that many columns late.
func (d *decoder) trailingSpaces(n *yaml.Node) int {
	if n.Kind != yaml.ScalarNode || n.Style&^yaml.TaggedStyle != 0 || n.Value == "" {
		return 0
	}
	src, end := d.lines.src, d.lines.end(n.Line)
	if end > 0 && src[end-1] == '\n' {
		end--
	}
	if end == 0 || src[end-1] != ' ' {
		return 0 // the common case: a line that does not end in a space
	}
	rest := src[d.lines.offset(n.Line, n.Column):end]
	value := bytes.TrimRight(rest, " ")
	if string(value) != n.Value {
		return 0 // a value that does not reach the line's end, or not as written
	}
	return len(rest) - len(value)
}

func isFlowIndicator(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }

package config

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// ParseLimited parses data, a stream of one or more YAML documents (JSON is
// read as YAML), into the YAML library's syntax tree under the limits of a
// subscriptions file: MaxFileSize, MaxPreScan, MaxTokens, MaxScalarSize and
// MaxNestingDepth, checked before the parser runs. It is for the other
// YAML and JSON files brighter reads (the infrastructure files of
// `lint --infra`), so they cost no more than a subscriptions file. A
// leading byte-order mark is skipped. Aliases are left in the tree
// unresolved: follow them through an AliasBudget.
//
// Errors: a limit exceeded or a syntax error is returned as an *Error at
// its position in name (Field empty), its message naming the limit of "a
// file brighter reads"; it never panics.
func ParseLimited(name string, data []byte) (*ast.File, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	f, err := parseYAML(data)
	if err == nil {
		return f, nil
	}
	e := &Error{File: name, Line: 1, Column: 1}
	var le *limitError
	var se *yaml.SyntaxError
	switch {
	case errors.As(err, &le):
		e.Line, e.Column, e.Msg = le.line, le.col, le.msg
	case errors.As(err, &se):
		if se.Token != nil && se.Token.Position != nil {
			e.Line, e.Column = se.Token.Position.Line, se.Token.Position.Column
		}
		e.Msg = "YAML syntax error: " + goccyPos.ReplaceAllString(se.Message, "at line $1, column $2")
	default:
		e.Msg = fmt.Sprintf("YAML syntax error: %s", goccyPos.ReplaceAllString(err.Error(), "at line $1, column $2"))
	}
	e.Msg = strings.ReplaceAll(e.Msg, "a subscriptions file", "a file brighter reads")
	return nil, e
}

// AliasBudget bounds what the aliases of one file bring in, as a
// subscriptions file's are bounded: each use of an anchored node costs the
// nodes of its subtree (at least 1), and a file may spend MaxAliasNodes in
// all. The zero value is not ready: use NewAliasBudget.
type AliasBudget struct {
	left  int
	sizes map[ast.Node]int
}

// NewAliasBudget returns a budget of MaxAliasNodes nodes.
func NewAliasBudget() *AliasBudget {
	return &AliasBudget{left: MaxAliasNodes, sizes: map[ast.Node]int{}}
}

// Spend charges one use of target (an alias's anchored node; nil for a
// merge key, which costs 1) and reports whether the budget still holds.
// Once it returns false it keeps returning false.
func (b *AliasBudget) Spend(target ast.Node) bool {
	cost := 1
	if !NodeIsNil(target) {
		c, ok := b.sizes[target]
		if !ok {
			var count nodeCounter
			ast.Walk(&count, target)
			c = max(int(count), 1)
			b.sizes[target] = c
		}
		cost = c
	}
	b.left -= cost
	return b.left >= 0
}

// Anchors returns every anchor of body by name (the last one when a name
// is used twice), the table an alias is resolved against.
func Anchors(body ast.Node) map[string]ast.Node {
	a := anchorCollector{}
	if !NodeIsNil(body) {
		ast.Walk(a, body)
	}
	return a
}

// nodeCounter counts the nodes ast.Walk visits (an alias as one node: its
// target is charged when it is resolved).
type nodeCounter int

func (c *nodeCounter) Visit(ast.Node) ast.Visitor { *c++; return c }

// anchorCollector records every anchor of a document by name.
type anchorCollector map[string]ast.Node

func (a anchorCollector) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && !NodeIsNil(an.Name) && !NodeIsNil(an.Value) {
		if tk := an.Name.GetToken(); tk != nil {
			a[tk.Value] = an.Value
		}
	}
	return a
}

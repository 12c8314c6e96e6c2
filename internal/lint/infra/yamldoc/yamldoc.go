// Package yamldoc is what the YAML and JSON readers of `lint --infra`
// (CloudFormation templates, Kubernetes manifests) share: a file parsed
// under the subscriptions file's limits (config.ParseLimited), aliases
// followed against the same alias budget (config.AliasBudget), mappings
// read key by key with each key's position, and errors collected with
// their positions as config.Errors.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/..., internal/broker/gcp/...,
// internal/pump, github.com/spf13/cobra
package yamldoc

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/goccy/go-yaml/ast"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/redact"
)

// File is one parsed file: its documents and what reading them found
// wrong.
type File struct {
	// Name is the file's path as given, used in positions.
	Name string
	// Docs are the bodies of the file's non-empty documents, in order.
	Docs []ast.Node

	anchors []map[string]ast.Node
	budget  *config.AliasBudget
	errs    config.Errors
}

// Parse parses data (YAML, one or more documents, or JSON) under
// config.ParseLimited's limits. Errors: the *config.Error of a limit
// exceeded or a syntax error.
func Parse(name string, data []byte) (*File, error) {
	f, err := config.ParseLimited(name, data)
	if err != nil {
		return nil, err
	}
	out := &File{Name: name, budget: config.NewAliasBudget()}
	for _, d := range f.Docs {
		if d == nil || IsNil(d.Body) {
			continue
		}
		out.Docs = append(out.Docs, d.Body)
		out.anchors = append(out.anchors, config.Anchors(d.Body))
	}
	return out, nil
}

// Err returns the problems recorded (Errorf), ordered by position and cut
// at config.MaxErrors, as config.Errors; nil when there are none.
func (f *File) Err() error {
	if len(f.errs) == 0 {
		return nil
	}
	es := slices.Clone(f.errs)
	slices.SortStableFunc(es, func(a, b *config.Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	if len(es) > config.MaxErrors {
		rest := es[config.MaxErrors]
		es = append(es[:config.MaxErrors:config.MaxErrors], &config.Error{File: rest.File, Line: rest.Line, Column: rest.Column,
			Msg: fmt.Sprintf("%d more problems from here on are not listed", len(f.errs)-config.MaxErrors)})
	}
	return es
}

// Failed reports whether a problem has been recorded.
func (f *File) Failed() bool { return len(f.errs) > 0 }

// Errorf records a problem at n's position; field is the path of the
// value it concerns ("Resources.Orders.Properties.VisibilityTimeout").
// Every string argument is cut to redact.MaxQuoted bytes.
func (f *File) Errorf(n ast.Node, field, format string, args ...any) {
	f.ErrorAt(f.Pos(n), field, format, args...)
}

// ErrorAt records a problem at p.
func (f *File) ErrorAt(p config.Position, field, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = redact.Quoted(s)
		}
	}
	f.errs = append(f.errs, &config.Error{File: p.File, Line: p.Line, Column: p.Column, Field: redact.Cut(field), Msg: fmt.Sprintf(format, args...)})
}

// IsNil reports whether n is nil or a typed nil pointer
// (config.NodeIsNil).
func IsNil(n ast.Node) bool { return config.NodeIsNil(n) }

// Pos returns where n starts in the file: for a mapping, its first key;
// the file's start when n has no position.
func (f *File) Pos(n ast.Node) config.Position {
	for i := 0; i < 8 && !IsNil(n); i++ {
		switch m := n.(type) {
		case *ast.MappingNode:
			if len(m.Values) > 0 && !IsNil(m.Values[0]) {
				n = m.Values[0].Key
				continue
			}
		case *ast.MappingValueNode:
			n = m.Key
			continue
		case *ast.LiteralNode:
			if m.Start == nil && !IsNil(m.Value) {
				n = m.Value
				continue
			}
		}
		break
	}
	p := config.Position{File: f.Name, Line: 1, Column: 1}
	if IsNil(n) {
		return p
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		p.Line, p.Column = tk.Position.Line, tk.Position.Column
	}
	return p
}

// Deref strips anchors and follows aliases (charging the alias budget),
// keeping tags. doc is the index of the document n belongs to. ok is false
// when an alias names no anchor or the budget is spent (both recorded at
// the alias); a nil n is returned as nil with ok true.
func (f *File) Deref(doc int, n ast.Node, field string) (ast.Node, bool) {
	for !IsNil(n) {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			name := ""
			if !IsNil(v.Value) && v.Value.GetToken() != nil {
				name = v.Value.GetToken().Value
			}
			var target ast.Node
			ok := doc >= 0 && doc < len(f.anchors)
			if ok {
				target, ok = f.anchors[doc][name]
			}
			if !ok {
				f.Errorf(v, field, "alias *%s refers to no anchor", name)
				return nil, false
			}
			if !f.budget.Spend(target) {
				f.Errorf(v, field, "aliases and merge keys bring in more than %d nodes here, the limit for a file (an alias bomb?)", config.MaxAliasNodes)
				return nil, false
			}
			n = target
		default:
			return n, true
		}
	}
	return nil, true
}

// Untag returns n's tag ("!GetAtt", "!!str"; "" when untagged) and the
// value under it, anchors stripped and aliases followed.
func (f *File) Untag(doc int, n ast.Node, field string) (tag string, v ast.Node, ok bool) {
	n, ok = f.Deref(doc, n, field)
	if !ok {
		return "", nil, false
	}
	if t, isTag := n.(*ast.TagNode); isTag {
		if t.Start != nil {
			tag = t.Start.Value
		}
		v, ok = f.Deref(doc, t.Value, field)
		return tag, v, ok
	}
	return "", n, true
}

// Entry is one key: value pair of a mapping.
type Entry struct {
	Key string
	// KeyNode is the key as written; Pos where it starts.
	KeyNode ast.Node
	Pos     config.Position
	// Val is the value, not yet dereferenced.
	Val ast.Node
	// Field is the path of the value ("spec.deadLetterPolicy").
	Field string
}

// Entries reads n (dereferenced) as a mapping: its pairs in order, merge
// keys (<<: *defaults) expanded with the explicit keys winning. A null n is
// an empty mapping. ok is false, with the problem recorded, when n is not
// a mapping or an alias in it fails.
func (f *File) Entries(doc int, n ast.Node, field string) (ents []Entry, ok bool) {
	return f.entries(doc, n, field, 0)
}

func (f *File) entries(doc int, n ast.Node, field string, merging int) ([]Entry, bool) {
	tag, n, ok := f.Untag(doc, n, field)
	if !ok {
		return nil, false
	}
	if IsNil(n) || n.Type() == ast.NullType {
		return nil, true
	}
	m, isMap := n.(*ast.MappingNode)
	if !isMap || (tag != "" && tag != "!!map") {
		f.Errorf(n, field, "must be a mapping (key: value), got %s", KindOf(n))
		return nil, false
	}
	seen := map[string]bool{}
	var ents, merged []Entry
	for _, mv := range m.Values {
		if IsNil(mv) {
			continue
		}
		_, key, ok := f.Untag(doc, mv.Key, field)
		if !ok || IsNil(key) {
			return nil, false
		}
		if key.Type() == ast.MergeKeyType {
			if merging >= config.MaxNestingDepth {
				f.Errorf(key, field, "merge keys nest deeper than the limit of %d levels here", config.MaxNestingDepth)
				return nil, false
			}
			if !f.budget.Spend(nil) {
				f.Errorf(key, field, "aliases and merge keys bring in more than %d nodes here, the limit for a file (an alias bomb?)", config.MaxAliasNodes)
				return nil, false
			}
			more, ok := f.mergeSources(doc, mv.Value, field, merging+1)
			if !ok {
				return nil, false
			}
			merged = append(merged, more...)
			continue
		}
		name, isScalar := config.NodeKeyText(key)
		if !isScalar {
			f.Errorf(key, field, "a key must be a plain name, got %s", KindOf(key))
			return nil, false
		}
		seen[name] = true
		ents = append(ents, Entry{Key: name, KeyNode: key, Pos: f.Pos(key), Val: mv.Value, Field: config.JoinPath(field, name)})
	}
	for _, e := range merged {
		if !seen[e.Key] {
			seen[e.Key] = true
			ents = append(ents, e)
		}
	}
	return ents, true
}

// mergeSources reads the value of a merge key: one mapping or a list of
// them, the earlier winning.
func (f *File) mergeSources(doc int, n ast.Node, field string, merging int) ([]Entry, bool) {
	_, v, ok := f.Untag(doc, n, field)
	if !ok {
		return nil, false
	}
	seq, isSeq := v.(*ast.SequenceNode)
	if !isSeq {
		return f.entries(doc, v, field, merging)
	}
	var out []Entry
	for _, item := range seq.Values {
		ents, ok := f.entries(doc, item, field, merging)
		if !ok {
			return nil, false
		}
		out = append(out, ents...)
	}
	return out, true
}

// Items reads n (dereferenced, untagged) as a sequence. ok is false, with
// the problem recorded, when it is not one.
func (f *File) Items(doc int, n ast.Node, field string) ([]ast.Node, bool) {
	_, n, ok := f.Untag(doc, n, field)
	if !ok {
		return nil, false
	}
	if IsNil(n) || n.Type() == ast.NullType {
		return nil, true
	}
	seq, isSeq := n.(*ast.SequenceNode)
	if !isSeq {
		f.Errorf(n, field, "must be a list, got %s", KindOf(n))
		return nil, false
	}
	return seq.Values, true
}

// Find returns the entry named key, or nil.
func Find(ents []Entry, key string) *Entry {
	for i := range ents {
		if ents[i].Key == key {
			return &ents[i]
		}
	}
	return nil
}

// ScalarKind is the YAML type of a scalar.
type ScalarKind int

// The scalar kinds.
const (
	NotScalar ScalarKind = iota
	Null
	String
	Int
	Float
	Bool
)

// Scalar returns n's text (a string's value unquoted, a number or boolean
// as written) and kind; NotScalar for a mapping, list or tagged node.
func Scalar(n ast.Node) (string, ScalarKind) {
	if IsNil(n) {
		return "", Null
	}
	switch v := n.(type) {
	case *ast.NullNode:
		return "", Null
	case *ast.StringNode:
		return v.Value, String
	case *ast.LiteralNode:
		if v.Value != nil {
			return v.Value.Value, String
		}
		return "", String
	case *ast.IntegerNode:
		return v.GetToken().Value, Int
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return v.GetToken().Value, Float
	case *ast.BoolNode:
		return v.GetToken().Value, Bool
	}
	return "", NotScalar
}

// KindOf names a node's YAML kind for error messages (config.NodeKind).
func KindOf(n ast.Node) string { return config.NodeKind(n) }

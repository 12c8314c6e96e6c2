package config

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/brightergo/brighter/internal/redact"
)

func (d *decoder) start() Position { return Position{File: d.name, Line: 1, Column: 1} }

// errAt records an error at p. Every string argument that came out of
// ${VAR} expansion is shown as written, and every %q of a string is cut at
// redact.MaxQuoted bytes with its length shown (uncut, a 200 KB
// key gave a 400 KB error line); so is a field path longer than that.
func (d *decoder) errAt(p Position, field, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = redact.Quoted(d.asWritten(s))
		}
	}
	d.errs = append(d.errs, &Error{File: p.File, Line: p.Line, Column: p.Column, Field: redact.Cut(field), Msg: d.f.written.apply(fmt.Sprintf(format, args...))})
}

// asWritten returns the file's text for s when s came out of ${VAR}
// expansion, else s.
func (d *decoder) asWritten(s string) string {
	if raw, ok := d.f.written[s]; ok {
		return raw
	}
	return s
}

func (d *decoder) errorf(n ast.Node, field, format string, args ...any) {
	d.errAt(d.posOf(n), field, format, args...)
}

// posOf returns where n starts: for a mapping, its first key.
func (d *decoder) posOf(n ast.Node) Position {
	for i := 0; i < 8 && !NodeIsNil(n); i++ {
		switch m := n.(type) {
		case *ast.MappingNode:
			if len(m.Values) > 0 && !NodeIsNil(m.Values[0]) {
				n = m.Values[0].Key
				continue
			}
		case *ast.MappingValueNode:
			n = m.Key
			continue
		case *ast.MappingKeyNode:
			if !NodeIsNil(m.Value) {
				n = m.Value
				continue
			}
		case *ast.LiteralNode:
			if m.Start == nil && !NodeIsNil(m.Value) {
				n = m.Value
				continue
			}
		}
		break
	}
	if NodeIsNil(n) {
		return d.start()
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return d.start()
	}
	return Position{File: d.name, Line: tk.Position.Line, Column: tk.Position.Column}
}

// spend charges the alias budget for one use of target (an alias's anchored
// node, nil for a merge key; see AliasBudget.Spend). It reports whether the
// budget (MaxAliasNodes) still holds.
func (d *decoder) spend(target ast.Node) bool { return d.alias.Spend(target) }

// nodeCounter counts the nodes ast.Walk visits (an alias as one node: its
// target is charged when it is resolved).
type nodeCounter int

func (c *nodeCounter) Visit(ast.Node) ast.Visitor { *c++; return c }

// resolve strips tags and anchors and follows aliases. An unknown alias or
// an exhausted alias budget is reported and yields nil.
func (d *decoder) resolve(n ast.Node, path string) ast.Node {
	r, _ := d.resolveOK(n, path)
	return r
}

// resolveOK is resolve that also says whether resolution failed (and was
// reported), as distinct from an absent value.
func (d *decoder) resolveOK(n ast.Node, path string) (ast.Node, bool) {
	for !NodeIsNil(n) {
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			name := ""
			if !NodeIsNil(v.Value) && v.Value.GetToken() != nil {
				name = v.Value.GetToken().Value
			}
			target, ok := d.anchors[name]
			if !ok {
				d.errorf(v, path, "alias *%s refers to no anchor", name)
				return nil, false
			}
			if !d.spend(target) {
				d.errorf(v, path, "aliases and merge keys bring in more than %d nodes here, the limit for a subscriptions file (an alias bomb?)", MaxAliasNodes)
				return nil, false
			}
			n = target
		default:
			return n, true
		}
	}
	return nil, true
}

// entriesOf reads e's value as a mapping with the given fields; a null value
// is an empty mapping.
func (d *decoder) entriesOf(e entry, valid []string) []entry {
	ents, _ := d.mapEntries(e.val, e.path, valid)
	return ents
}

// mapEntries reads n as a mapping. Keys not in valid are reported (with the
// closest valid name) and dropped; valid == nil accepts any key. Merge keys
// (<<: *anchor) are expanded; explicit keys win over merged ones. A null n is
// an empty mapping. Every key's position is recorded under its path. ok is
// false when n is not a mapping.
func (d *decoder) mapEntries(n ast.Node, path string, valid []string) (ents []entry, ok bool) {
	n, ok = d.resolveOK(n, path)
	if !ok {
		return nil, false
	}
	if NodeIsNil(n) || n.Type() == ast.NullType {
		return nil, true
	}
	m, isMap := n.(*ast.MappingNode)
	if !isMap {
		d.errorf(n, path, "must be a mapping (key: value), got %s", NodeKind(n))
		return nil, false
	}
	var merged []entry
	ents = make([]entry, 0, len(m.Values))
	for _, mv := range m.Values {
		if NodeIsNil(mv) {
			continue
		}
		key := d.resolve(mv.Key, path)
		if NodeIsNil(key) {
			continue
		}
		if key.Type() == ast.MergeKeyType {
			merged = append(merged, d.mergeEntries(mv.Value, path, valid)...)
			continue
		}
		name, isScalar := NodeKeyText(key)
		field := JoinPath(path, name)
		if !isScalar {
			d.errorf(key, path, "a key must be a plain name, got %s", NodeKind(key))
			continue
		}
		if valid != nil && !slices.Contains(valid, name) {
			d.unknownField(key, field, name, valid)
			continue
		}
		d.record(field, d.posOf(key))
		ents = append(ents, entry{key: name, keyN: key, val: mv.Value, path: field})
	}
	// The parser refuses a key written twice in one mapping, so only a
	// merged key can repeat one: the first of each name wins. A mapping
	// holds a few keys, and a scan of them costs less than a set.
	for _, e := range merged {
		if _, dup := findEntry(ents, e.key); !dup {
			d.record(e.path, d.posOf(e.keyN))
			ents = append(ents, e)
		}
	}
	return ents, true
}

// findEntry returns the entry of ents with the given key.
func findEntry(ents []entry, key string) (entry, bool) {
	for _, e := range ents {
		if e.key == key {
			return e, true
		}
	}
	return entry{}, false
}

// mergeEntries reads the value of a merge key: a mapping or a list of them.
// Merges nest at most MaxNestingDepth deep (a mapping merged into itself
// ends there).
func (d *decoder) mergeEntries(v ast.Node, path string, valid []string) []entry {
	if d.merging >= MaxNestingDepth {
		d.errorf(v, path, "merge keys (<<) nest deeper than the limit of %d levels here; is an anchor referring to itself?", MaxNestingDepth)
		return nil
	}
	d.merging++
	defer func() { d.merging-- }()
	if !d.spend(nil) {
		d.errorf(v, path, "aliases and merge keys bring in more than %d nodes here, the limit for a subscriptions file (an alias bomb?)", MaxAliasNodes)
		return nil
	}
	v, ok := d.resolveOK(v, path)
	if !ok {
		return nil
	}
	if seq, ok := v.(*ast.SequenceNode); ok {
		var out []entry
		for _, it := range seq.Values {
			out = append(out, d.mergeEntries(it, path, valid)...)
		}
		return out
	}
	if _, ok := v.(*ast.MappingNode); !ok {
		d.errorf(v, path, "a merge key (<<) takes a mapping or a list of mappings, got %s", NodeKind(v))
		return nil
	}
	ents, _ := d.mapEntries(v, path, valid)
	return ents
}

// record keeps p as the position of the key at path, unless one is
// already kept: a key under the subscription being decoded in that
// subscription's table only (File.Pos looks there), any other key in the
// file's.
func (d *decoder) record(path string, p Position) {
	if d.sub != nil && strings.HasPrefix(path, d.subBase) {
		rel := path[len(d.subBase):]
		if _, ok := d.sub.pos[rel]; !ok {
			d.sub.pos[rel] = keyPos{line: clampInt32(p.Line), col: clampInt32(p.Column)}
		}
		return
	}
	if _, ok := d.f.pos[path]; !ok {
		d.f.pos[path] = p
	}
}

// clampInt32 is n, or the nearest int32 to it. A line or column of a file
// within MaxFileSize always fits.
func clampInt32(n int) int32 { return int32(min(max(n, math.MinInt32), math.MaxInt32)) }

func (d *decoder) unknownField(key ast.Node, field, name string, valid []string) {
	if s := closest(name, valid); s != "" {
		d.errorf(key, field, "unknown field %q; did you mean %q?", name, s)
		return
	}
	d.errorf(key, field, "unknown field %q; valid fields are %s", name, strings.Join(valid, ", "))
}

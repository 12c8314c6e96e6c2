package config

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	yaml "go.yaml.in/yaml/v3"

	"github.com/brightergo/brighter/internal/redact"
)

func (d *decoder) start() Position { return Position{File: d.name, Line: 1, Column: 1} }

// errAt records an error at p. Every %q of a string is cut at
// redact.MaxQuoted bytes with its length shown (uncut, a 200 KB
// key gave a 400 KB error line); so is a field path longer than that.
// Nothing in the message is rewritten: a caller that quotes a field's
// value quotes it as written when it came out of ${VAR} expansion
// (scalar.display, writtenAt), so that no other text (a suggestion, the
// valid values, a plain value equal to an expanded one) is ever taken for
// a variable.
func (d *decoder) errAt(p Position, field, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = redact.Quoted(s)
		}
	}
	d.errs = append(d.errs, &Error{File: p.File, Line: p.Line, Column: p.Column, Field: redact.Cut(field), Msg: fmt.Sprintf(format, args...)})
}

// writtenAt returns value, the value of the field at path (a full YAML
// path), or the text the file has for that field when its value came out
// of ${VAR} expansion: what an error about that field quotes.
func (d *decoder) writtenAt(path, value string) string {
	if raw, ok := d.raw[path]; ok {
		return raw
	}
	return value
}

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	d.errAt(d.posOf(n), field, format, args...)
}

// posOf returns where n starts, as goccy/go-yaml counted columns (in
// characters, a tab counting none: goccyColumn): for a mapping, its first
// key.
func (d *decoder) posOf(n *yaml.Node) Position {
	for i := 0; i < 8 && n != nil && n.Kind == yaml.MappingNode && len(n.Content) > 0; i++ {
		n = n.Content[0]
	}
	if n == nil || n.Line < 1 || n.Column < 1 {
		return d.start()
	}
	return Position{File: d.name, Line: n.Line, Column: d.goccyColumn(n.Line, n.Column) + d.trailingSpaces(n) + d.emptyAtEnd(n)}
}

// spend charges the alias budget for one use of target (an alias's anchored
// node, nil for a merge key; see treeBudget.spend). It reports whether the
// budget (MaxAliasNodes) still holds.
func (d *decoder) spend(target *yaml.Node) bool { return d.alias.spend(target) }

// resolve strips tags and anchors and follows aliases. An exhausted alias
// budget is reported and yields nil.
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	r, _ := d.resolveOK(n, path)
	return r
}

// resolveOK is resolve that also says whether resolution failed (and was
// reported), as distinct from an absent value. An alias resolves to the
// last anchor of its name in the document, as goccy/go-yaml's tree was
// read (an alias before its anchor too: patchAliases). A node that carries an anchor or a tag resolves to a copy that
// starts where its value does (valueStart), as the value node did in
// goccy/go-yaml's tree.
func (d *decoder) resolveOK(n *yaml.Node, path string) (*yaml.Node, bool) {
	for n != nil {
		name, isAlias := aliasName(n)
		if !isAlias {
			if n.Anchor == "" && n.Style&yaml.TaggedStyle == 0 {
				return n, true
			}
			v := *n
			v.Anchor = ""
			v.Line, v.Column = d.valueStart(n)
			return &v, true
		}
		target, ok := d.anchors[name]
		if !ok {
			d.errorf(n, path, "alias *%s refers to no anchor", name)
			return nil, false
		}
		if !d.spend(target) {
			d.errorf(n, path, "aliases and merge keys bring in more than %d nodes here, the limit for a subscriptions file (an alias bomb?)", MaxAliasNodes)
			return nil, false
		}
		n = target
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
func (d *decoder) mapEntries(n *yaml.Node, path string, valid []string) (ents []entry, ok bool) {
	n, ok = d.resolveOK(n, path)
	if !ok {
		return nil, false
	}
	if n == nil || typeOf(n) == ast.NullType {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a mapping (key: value), got %s", kindOf(n))
		return nil, false
	}
	var merged []entry
	ents = make([]entry, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if d.explicit[n.Content[i]] {
			d.errorf(n.Content[i], path, "a key must be a plain name, got %s", typeName(ast.MappingKeyType))
			continue
		}
		key := d.resolve(n.Content[i], path)
		if key == nil {
			continue
		}
		if isMergeKey(key) {
			merged = append(merged, d.mergeEntries(n.Content[i+1], path, valid)...)
			continue
		}
		if key.Kind != yaml.ScalarNode {
			d.errorf(key, path, "a key must be a plain name, got %s", kindOf(key))
			continue
		}
		name := key.Value
		field := JoinPath(path, name)
		if valid != nil && !slices.Contains(valid, name) {
			d.unknownField(key, field, name, valid)
			continue
		}
		d.record(field, d.posOf(key))
		ents = append(ents, entry{key: name, keyN: key, val: n.Content[i+1], path: field})
	}
	// A key written twice in one mapping is refused before the walk
	// (survey.checkKeys), so only a merged key can repeat one: the first
	// of each name wins. A mapping holds a few keys, and a scan of them
	// costs less than a set.
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
func (d *decoder) mergeEntries(v *yaml.Node, path string, valid []string) []entry {
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
	if v != nil && v.Kind == yaml.SequenceNode {
		var out []entry
		for _, it := range v.Content {
			out = append(out, d.mergeEntries(it, path, valid)...)
		}
		return out
	}
	if v == nil || v.Kind != yaml.MappingNode {
		d.errorf(v, path, "a merge key (<<) takes a mapping or a list of mappings, got %s", kindOf(v))
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

func (d *decoder) unknownField(key *yaml.Node, field, name string, valid []string) {
	if s := closest(name, valid); s != "" {
		d.errorf(key, field, "unknown field %q; did you mean %q?", name, s)
		return
	}
	d.errorf(key, field, "unknown field %q; valid fields are %s", name, strings.Join(valid, ", "))
}

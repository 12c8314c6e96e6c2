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
//
// An error found while a merge key (<<) is expanded (a key of the anchored
// mapping) says so (MergedNote): it points into the anchored mapping, not
// at the subscription its field path names.
func (d *decoder) errAt(p Position, field, format string, args ...any) {
	d.addErr(p, field, d.merging > 0, format, args...)
}

// mergeErrf is errorf for an error about the merge keys and aliases
// themselves (a limit they exceed, a merge of no mapping), which says so
// and takes no MergedNote.
func (d *decoder) mergeErrf(n *yaml.Node, field, format string, args ...any) {
	d.addErr(d.posOf(n), field, false, format, args...)
	if d.noNote == nil {
		d.noNote = map[*Error]bool{}
	}
	d.noNote[d.errs[len(d.errs)-1]] = true
}

// addErr is errAt, with MergedNote added when note is true.
func (d *decoder) addErr(p Position, field string, note bool, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = redact.Quoted(s)
		}
	}
	msg := fmt.Sprintf(format, args...)
	if note {
		msg += MergedNote
	}
	d.errs = append(d.errs, &Error{File: p.File, Line: p.Line, Column: p.Column, Field: redact.Cut(field), Msg: msg})
}

// MergedNote ends the message of an error or a lint finding about a value
// that came into a subscription through a merge key (<<: *anchor), which
// points at the anchored mapping's line: the line to edit, unless the
// subscription overrides the key.
const MergedNote = " (brought in by a merge key, <<: change it where the anchor sets it, or override it in the subscription)"

// noteMerged adds MergedNote to each error about a subscription's field
// whose value the subscription's merge key brought in (Subscription.Merged)
// and that does not say so yet.
func (d *decoder) noteMerged() {
	for _, e := range d.errs {
		if e.Field == "" || d.noNote[e] || strings.HasSuffix(e.Msg, MergedNote) {
			continue
		}
		if s, rel, ok := d.f.subscriptionAt(e.Field); ok && s.Merged(rel) {
			e.Msg += MergedNote
		}
	}
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
			d.mergeErrf(n, path, "aliases and merge keys bring in more than %d nodes here, the limit for a subscriptions file (an alias bomb?)", MaxAliasNodes)
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
// an empty mapping. Every key's position is recorded under its path by the
// mapping the walk reads (not by one a merge key brings in): the position
// of the key the value comes from, an explicit key's own, or, for a merged
// key, its position in the anchored mapping, marked as merged. ok is false
// when n is not a mapping.
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
		if path == "" && isExtensionKey(name) {
			// An extension field: kept for its anchors, read by nothing.
			continue
		}
		if valid != nil && !slices.Contains(valid, name) {
			d.unknownField(key, n.Content[i+1], path, name, valid)
			continue
		}
		if d.merging == 0 {
			d.record(field, d.posOf(key), false)
		}
		ents = append(ents, entry{key: name, keyN: key, val: n.Content[i+1], path: field})
	}
	// A key written twice in one mapping is refused before the walk
	// (survey.checkKeys), so only a merged key can repeat one: the first
	// of each name wins. A mapping holds a few keys, and a scan of them
	// costs less than a set.
	for _, e := range merged {
		if _, dup := findEntry(ents, e.key); !dup {
			if d.merging == 0 {
				d.record(e.path, d.posOf(e.keyN), true)
			}
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
		d.mergeErrf(v, path, "merge keys (<<) nest deeper than the limit of %d levels here; is an anchor referring to itself?", MaxNestingDepth)
		return nil
	}
	d.merging++
	defer func() { d.merging-- }()
	if !d.spend(nil) {
		d.mergeErrf(v, path, "aliases and merge keys bring in more than %d nodes here, the limit for a subscriptions file (an alias bomb?)", MaxAliasNodes)
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
		d.mergeErrf(v, path, "a merge key (<<) takes a mapping or a list of mappings, got %s", kindOf(v))
		return nil
	}
	ents, _ := d.mapEntries(v, path, valid)
	return ents
}

// record keeps p as the position of the key at path, unless one is
// already kept: a key under the subscription being decoded in that
// subscription's table only (File.Pos looks there), any other key in the
// file's. merged says the key came in through a merge key (<<), which a
// subscription's table keeps (Subscription.Merged).
func (d *decoder) record(path string, p Position, merged bool) {
	if d.sub != nil && strings.HasPrefix(path, d.subBase) {
		rel := path[len(d.subBase):]
		if _, ok := d.sub.pos[rel]; !ok {
			d.sub.pos[rel] = newKeyPos(p, merged)
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

// extensionPrefix starts the name of a top-level extension field
// (x-defaults: &defaults {...}), as in a Docker Compose file: the decoder,
// lint and the JSON schema accept and ignore it, so a block that is there
// only for its anchor can sit beside connections and subscriptions. What
// it holds is still bound by every limit of the file (size, tokens,
// nesting, and aliases and merge keys as they are used).
const extensionPrefix = "x-"

// isExtensionKey reports whether a top-level key names an extension field
// (extensionPrefix).
func isExtensionKey(name string) bool { return strings.HasPrefix(name, extensionPrefix) }

// unknownField reports the key name of a mapping at path, whose value is
// val, as unknown, with the closest valid name; at the top level, a key
// whose value holds an anchor is told of the extension prefix.
func (d *decoder) unknownField(key, val *yaml.Node, path, name string, valid []string) {
	field := JoinPath(path, name)
	hint := ""
	if path == "" {
		if anchor := anchorIn(val); anchor != "" {
			hint = fmt.Sprintf("; a block kept only for its anchor (&%s) goes under a top-level key starting with %s (%s), which brighter ignores",
				redact.Cut(anchor), extensionPrefix, redact.Cut(extensionPrefix+strings.TrimPrefix(name, "X-")))
		}
	}
	if s := closest(name, valid); s != "" {
		d.errorf(key, field, "unknown field %q; did you mean %q?%s", name, s, hint)
		return
	}
	d.errorf(key, field, "unknown field %q; valid fields are %s%s", name, strings.Join(valid, ", "), hint)
}

// anchorIn returns the name of the first anchor n or a node within it
// carries (aliases are not followed), or "".
func anchorIn(n *yaml.Node) string {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n, stack = stack[len(stack)-1], stack[:len(stack)-1]
		if n == nil || n.Kind == yaml.AliasNode {
			continue
		}
		if n.Anchor != "" {
			return n.Anchor
		}
		for i := len(n.Content) - 1; i >= 0; i-- {
			stack = append(stack, n.Content[i])
		}
	}
	return ""
}

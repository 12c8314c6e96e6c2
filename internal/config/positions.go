package config

import (
	"strconv"
	"strings"
)

// Pos returns the position of the key at the given YAML path, for example
// "connections.gcp.projectId" or "subscriptions[1].handler.url". For a path
// that was not present in the file it returns the position of the nearest
// present ancestor, and the start of the file when there is none.
func (f *File) Pos(path string) Position {
	if s, rel, ok := f.subscriptionAt(path); ok {
		// A subscription's keys are kept in its own table only.
		return s.Pos(rel)
	}
	for p := path; p != ""; p = parentPath(p) {
		if pos, ok := f.pos[p]; ok {
			return pos
		}
	}
	return Position{File: f.Path, Line: 1, Column: 1}
}

// subscriptionAt splits a path under "subscriptions[i]" into the
// subscription of Index i and the path relative to it ("" for the
// subscription itself, "handler.url", "[2]" for a path that indexes it);
// ok is false for any other path or an index no subscription has.
func (f *File) subscriptionAt(path string) (s *Subscription, rel string, ok bool) {
	const prefix = "subscriptions["
	rest, found := strings.CutPrefix(path, prefix)
	if !found {
		return nil, "", false
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return nil, "", false
	}
	i, err := strconv.Atoi(rest[:end])
	if err != nil || i < 0 || strconv.Itoa(i) != rest[:end] {
		return nil, "", false
	}
	rel = rest[end+1:]
	switch {
	case rel == "" || rel[0] == '[':
		rel = ""
	case rel[0] == '.':
		rel = rel[1:]
	default:
		return nil, "", false
	}
	if i < len(f.Subscriptions) && f.Subscriptions[i].Index == i {
		return f.Subscriptions[i], rel, true
	}
	for _, s := range f.Subscriptions {
		if s.Index == i {
			return s, rel, true
		}
	}
	return nil, "", false
}

// parentPath drops the last element of a YAML path: "a.b[2]" -> "a.b",
// "a.b" -> "a", "a" -> "".
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

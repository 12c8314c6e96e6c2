package config

import (
	"fmt"
	"sort"
	"strings"
)

// Position is where a key or value starts in a subscriptions file: the file
// name as given to Load or Parse, and the 1-based line and column.
type Position struct {
	File   string
	Line   int
	Column int
}

// String returns "FILE:LINE:COL".
func (p Position) String() string {
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// IsValid reports whether p names a line (Line > 0).
func (p Position) IsValid() bool { return p.Line > 0 }

// Error is one problem of a subscriptions file: where it is (File, Line,
// Column), which field it concerns as a YAML path (for example
// "subscriptions[0].bufferSize"; empty for a YAML syntax error), and what is
// wrong, with the valid names or values where there is a finite set.
type Error struct {
	File   string
	Line   int
	Column int
	// Field is the YAML path of the field, e.g. subscriptions[0].handler.url.
	Field string
	// Msg says what is wrong and, where it can, what would be right.
	Msg string
}

// Error returns "FILE:LINE:COL: FIELD: MSG" ("FILE:LINE:COL: MSG" when Field
// is empty).
func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Column, e.Field, e.Msg)
}

// Pos returns the error's position.
func (e *Error) Pos() Position { return Position{File: e.File, Line: e.Line, Column: e.Column} }

// Errors is every problem found in one subscriptions file, ordered by line
// and column. Load and Parse return a non-empty Errors (as error) when the
// file is not valid; use errors.As to get it back.
type Errors []*Error

// Error returns each error's text on its own line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sortErrors orders errors by line then column, keeping discovery order for
// ties.
func sortErrors(es Errors) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Column < es[j].Column
	})
}

package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Load reads the subscriptions file at path and returns it parsed, defaulted
// and validated (see Parse). Reading "-" as standard input is the caller's
// business: read it and call Parse. env looks up environment variables for
// ${VAR} expansion; pass os.LookupEnv in production (nil means
// os.LookupEnv).
//
// Errors: a read failure is returned wrapped; every problem of the file's
// content is returned together as Errors (file:line:column, field, message).
func Load(path string, env func(string) (string, bool)) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read subscriptions file: %w", err)
	}
	return Parse(path, data, env)
}

// Parse decodes a subscriptions file held in data; name is the file name used
// in positions and errors, and its directory is the base of relative memory
// seed and output paths. ${VAR} and ${VAR:-default} in scalar values are
// expanded with env before the value is typed (so `bufferSize: ${N}` works);
// nil env means os.LookupEnv. Defaults are applied (Brighter's, from the
// field tables; timeOut by transport, see DefaultTimeOut) and the block of
// the chosen transport is always non-nil.
//
// On any problem Parse returns a nil *File and an Errors holding every
// problem found, ordered by position. It never panics.
func Parse(name string, data []byte, env func(string) (string, bool)) (*File, error) {
	if env == nil {
		env = os.LookupEnv
	}
	d := &decoder{
		name:    name,
		dir:     filepath.Dir(name),
		env:     env,
		f:       &File{Path: name, pos: map[string]Position{}, written: asWritten{}},
		anchors: map[string]ast.Node{},
		alias:   NewAliasBudget(),
	}
	d.decode(data)
	if len(d.errs) > 0 {
		sortErrors(d.errs)
		if n := len(d.errs); n > MaxErrors {
			// A hostile file (10,000 aliases of one subscription) must not
			// become a 10,000-line report.
			rest := d.errs[MaxErrors]
			d.errs = append(d.errs[:MaxErrors:MaxErrors], &Error{File: rest.File, Line: rest.Line, Column: rest.Column,
				Msg: fmt.Sprintf("%d more problems from here on are not listed", n-MaxErrors)})
		}
		return nil, d.errs
	}
	return d.f, nil
}

// MaxErrors is how many problems Parse lists; one more Error says how many
// were left out.
const MaxErrors = 100

// decoder walks the YAML syntax tree of one file.
type decoder struct {
	name    string
	dir     string
	env     func(string) (string, bool)
	f       *File
	errs    Errors
	anchors map[string]ast.Node
	// alias is what aliases and merge keys may still bring in, in nodes
	// (MaxAliasNodes, spend).
	alias *AliasBudget
	// merging is how deep merge keys nest at this point of the walk.
	merging int

	// sub is the subscription being decoded; keys under subBase are also
	// recorded in its position table.
	sub     *Subscription
	subBase string
}

// entry is one key: value pair of a mapping.
type entry struct {
	key  string
	keyN ast.Node
	val  ast.Node
	path string
}

func (d *decoder) decode(data []byte) {
	data = bytes.TrimPrefix(data, utf8BOM)
	f, err := parseYAML(data)
	if err != nil {
		var se *yaml.SyntaxError
		var le *limitError
		p := Position{File: d.name, Line: 1, Column: 1}
		if errors.As(err, &le) {
			p.Line, p.Column = le.line, le.col
			d.errAt(p, "", "%s", le.msg)
			return
		}
		msg := err.Error()
		if errors.As(err, &se) {
			msg = se.Message
			if se.Token != nil && se.Token.Position != nil {
				p.Line, p.Column = se.Token.Position.Line, se.Token.Position.Column
			}
		}
		d.errAt(p, "", "YAML syntax error: %s", goccyPos.ReplaceAllString(msg, "at line $1, column $2"))
		return
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && !NodeIsNil(doc.Body) {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		d.errAt(d.start(), "", "the file is empty; it needs a subscriptions list (see examples/)")
		return
	}
	if len(docs) > 1 {
		d.errorf(docs[1].Body, "", "a subscriptions file holds one YAML document; found %d", len(docs))
	}
	ast.Walk(anchorCollector(d.anchors), docs[0].Body)
	d.file(docs[0].Body)
}

// goccyPos matches the "at [LINE:COL]" the YAML parser writes in messages.
var goccyPos = regexp.MustCompile(`at \[(\d+):(\d+)\]`)

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

func (d *decoder) file(body ast.Node) {
	ents, ok := d.mapEntries(body, "", topFields)
	if !ok {
		return
	}
	var subsEntry *entry
	for i := range ents {
		e := &ents[i]
		switch e.key {
		case "connections":
			d.connections(e)
		case "subscriptions":
			subsEntry = e
		}
	}
	if subsEntry == nil {
		d.errAt(d.posOf(body), "subscriptions", "required field is missing; list at least one subscription")
		return
	}
	d.subscriptions(subsEntry)
}

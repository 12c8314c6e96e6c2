package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	goccy "github.com/goccy/go-yaml"
	yaml "go.yaml.in/yaml/v3"
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
		name:  name,
		dir:   filepath.Dir(name),
		env:   env,
		f:     &File{Path: name, pos: map[string]Position{}, written: asWritten{}},
		alias: newTreeBudget(),
	}
	d.decode(data)
	if len(d.errs) > 0 {
		d.noteMerged()
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

// decoder walks the YAML tree of one file.
type decoder struct {
	name string
	dir  string
	env  func(string) (string, bool)
	f    *File
	errs Errors
	// lines finds the lines of the text yaml/v3 read; tabs says whether it
	// holds a tab (goccyColumn).
	lines *lineIndex
	tabs  bool
	// anchors holds the document's anchors by name (the last of a name).
	anchors map[string]*yaml.Node
	// last is the file's last node (emptyAtEnd).
	last *yaml.Node
	// explicit holds the keys written after '?' (survey.explicit).
	explicit map[*yaml.Node]bool
	// alias is what aliases and merge keys may still bring in, in nodes
	// (MaxAliasNodes, spend).
	alias *treeBudget
	// merging is how deep merge keys nest at this point of the walk.
	merging int
	// noNote holds the errors about merge keys themselves, which
	// noteMerged leaves as they are.
	noNote map[*Error]bool

	// raw holds, by full YAML path, the text the file has for each value
	// that came out of ${VAR} expansion (noteWritten, writtenAt).
	raw map[string]string

	// sub is the subscription being decoded; keys under subBase are also
	// recorded in its position table.
	sub     *Subscription
	subBase string
}

// entry is one key: value pair of a mapping.
type entry struct {
	key  string
	keyN *yaml.Node
	val  *yaml.Node
	path string
}

func (d *decoder) decode(data []byte) {
	data = bytes.TrimPrefix(data, utf8BOM)
	marks, le := fileLimits(data)
	if le != nil {
		d.limitErr(le)
		return
	}
	// Past MaxTokens marks the tokens are counted before yaml/v3 builds a
	// tree of them: a file over MaxTokens costs no more than it did.
	counted := marks > MaxTokens
	if counted {
		if le := tokenLimits(data); le != nil {
			d.limitErr(le)
			return
		}
	}
	src, replaced, _ := standIns(data)
	docs, err := parseV3(src)
	if err != nil && v3Anchor.MatchString(err.Error()) {
		// An alias with no anchor before it: goccy/go-yaml resolved it
		// against the document's anchors (or reported it at the alias).
		if f, gerr := parseYAML(data); gerr == nil {
			if patched, ok := patchAliases(src, f); ok {
				src = patched
				docs, err = parseV3(src)
			}
		}
	}
	if err != nil {
		d.syntaxError(data, err)
		return
	}
	d.lines, d.tabs = newLineIndex(src), bytes.IndexByte(src, '\t') >= 0
	if replaced || d.tabs {
		for _, doc := range docs {
			asGoccyRead(doc.body, replaced, d.tabs)
		}
	}
	s := surveyDocs(docs, d.lines)
	if s.needsGoccy(d.tabs) {
		if _, err := parseYAML(data); err != nil {
			d.goccyError(err)
			return
		}
	}
	if !counted && needsTokenCheck(marks, s) {
		if le := tokenLimits(data); le != nil {
			d.limitErr(le)
			return
		}
	}
	if s.dup != nil {
		first := d.posOf(s.first)
		d.errAt(d.posOf(s.dup), "", "YAML syntax error: %s", fmt.Sprintf("mapping key %q already defined at line %d, column %d", s.dup.Value, first.Line, first.Column))
		return
	}
	var bodies []*yaml.Node
	for _, doc := range docs {
		if doc.body != nil {
			bodies = append(bodies, doc.body)
		}
	}
	if len(bodies) == 0 {
		d.errAt(d.start(), "", "the file is empty; it needs a subscriptions list (see examples/)")
		return
	}
	if len(bodies) > 1 {
		d.errorf(bodies[1], "", "a subscriptions file holds one YAML document; found %d", len(bodies))
	}
	d.anchors, d.last, d.explicit = s.anchors, s.last, s.explicit
	d.file(bodies[0])
}

// goccyError reports err, from goccy/go-yaml's parse of the file
// (parseYAML): a limit exceeded or a syntax error, at its position.
func (d *decoder) goccyError(err error) {
	var se *goccy.SyntaxError
	var le *limitError
	p := Position{File: d.name, Line: 1, Column: 1}
	if errors.As(err, &le) {
		d.limitErr(le)
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
}

// limitErr reports a limit of the file exceeded.
func (d *decoder) limitErr(le *limitError) {
	d.errAt(Position{File: d.name, Line: le.line, Column: le.col}, "", "%s", le.msg)
}

// goccyPos matches the "at [LINE:COL]" the YAML parser writes in messages.
var goccyPos = regexp.MustCompile(`at \[(\d+):(\d+)\]`)

func (d *decoder) file(body *yaml.Node) {
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

package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	yaml "go.yaml.in/yaml/v3"
)

// The subscriptions file is parsed by go.yaml.in/yaml/v3 into its
// yaml.Node tree (docs/adr/0008-yaml-v3-for-the-subscriptions-file.md):
// it builds that tree in about a third of the time goccy/go-yaml takes to
// build its own. goccy/go-yaml stays the authority for what the file's
// users see when yaml/v3 refuses a file (its syntax errors, with their
// columns, are today's) and for the exact limits of limits.go, run on its
// tokens only when a cheap bound on the yaml/v3 tree says a limit may be
// exceeded (needsTokenCheck).

// v3Doc is one document of the file: its content node, nil for an empty
// document.
type v3Doc struct{ body *yaml.Node }

// parseV3 parses data (the BOM stripped, the size and pre-scan limits
// checked) into its documents. A file yaml/v3 refuses is returned as its
// error.
func parseV3(data []byte) (docs []v3Doc, err error) {
	defer func() {
		if r := recover(); r != nil {
			docs, err = nil, fmt.Errorf("yaml: the YAML parser failed on this input: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		var body *yaml.Node
		if len(n.Content) > 0 && !emptyDocument(n.Content[0]) {
			body = n.Content[0]
		}
		docs = append(docs, v3Doc{body: body})
	}
}

// emptyDocument reports whether n is the null yaml/v3 puts in a document
// with no content ("---" alone), which goccy/go-yaml, and so the decoder,
// counted as no document at all.
func emptyDocument(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "" && n.Style == 0 && n.Anchor == "" && n.Tag == "!!null"
}

// stand-ins for the characters yaml/v3 refuses or reads differently from
// goccy/go-yaml: the C0 and C1 controls but tab, line feed and carriage
// return, DEL, U+0085, U+2028 and U+2029 (yaml/v3 breaks lines at them),
// U+FEFF (yaml/v3 skips it at the start of a line), U+FFFE and U+FFFF. Each
// is replaced by the private-use character standIn+c before yaml/v3 reads
// the file (one character for one, so lines and columns stay) and restored
// in every value after, so that such a character is a character of its
// value as goccy/go-yaml read it: a name holding U+0000 gets the name
// rule's error, not a syntax error. A byte that is not UTF-8 becomes
// U+FFFD, as goccy/go-yaml reads it.
const standIn = 0xF0000

// needsStandIn reports whether r is read differently by yaml/v3 (see standIn).
func needsStandIn(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n' && r != '\r'
	case r < 0x7F:
		return false
	case r <= 0x9F:
		return true
	}
	return r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF
}

// standIns returns data with every character yaml/v3 would refuse or read
// differently replaced by its stand-in, and whether any was (data itself
// when none was). ok is false when data already holds a character of the
// stand-ins' range, which could not be told apart: data is returned
// unchanged and yaml/v3 refuses it as it would.
func standIns(data []byte) (out []byte, replaced, ok bool) {
	i := 0
	for ; i < len(data); i++ {
		c := data[i]
		if c >= 0x80 || c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7F {
			break
		}
	}
	if i == len(data) {
		return data, false, true
	}
	out = make([]byte, 0, len(data)+len(data)/8)
	out = append(out, data[:i]...)
	for i < len(data) {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r >= standIn && r <= standIn+0xFFFF:
			return data, false, false
		case r == utf8.RuneError && size == 1:
			out = utf8.AppendRune(out, utf8.RuneError)
			replaced = true
		case needsStandIn(r):
			out = utf8.AppendRune(out, standIn+r)
			replaced = true
		default:
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	return out, replaced, true
}

// restore puts back the characters standIns replaced in s.
func restore(s string) string {
	if !hasStandIn(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r >= standIn && r <= standIn+0xFFFF {
			r -= standIn
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

func hasStandIn(s string) bool {
	for i := 0; i+3 < len(s); i++ {
		// U+F0000..U+FFFFF are F3 B0..BF xx xx in UTF-8.
		if s[i] == 0xF3 && s[i+1] >= 0xB0 && s[i+1] <= 0xBF {
			return true
		}
	}
	return false
}

// asGoccyRead makes the values of the tree at n what goccy/go-yaml read:
// with replaced, the characters standIns replaced are restored in every
// value, anchor and tag; with tabs, a plain scalar loses its tabs, as
// goccy/go-yaml's lexer dropped them ("a\tb" was "ab").
func asGoccyRead(n *yaml.Node, replaced, tabs bool) {
	if n == nil {
		return
	}
	if replaced {
		n.Value, n.Anchor, n.Tag = restore(n.Value), restore(n.Anchor), restore(n.Tag)
	}
	if tabs && n.Kind == yaml.ScalarNode && n.Style&^yaml.TaggedStyle == 0 && strings.IndexByte(n.Value, '\t') >= 0 {
		n.Value = strings.ReplaceAll(n.Value, "\t", "")
	}
	for _, c := range n.Content {
		asGoccyRead(c, replaced, tabs)
	}
}

// aliasMarker stands, in the text yaml/v3 reads, for the '*' of an alias
// that has no anchor of its name before it (patchAliases): yaml/v3 refuses
// such an alias, goccy/go-yaml resolved it against the document's anchors
// (the last of the name, before or after it) and the decoder still does.
// It is one character, as '*' is, so lines and columns stay.
const aliasMarker = "\U00100000"

// aliasName returns the anchor name n refers to when n is an alias (or a
// patched one).
func aliasName(n *yaml.Node) (string, bool) {
	if n.Kind == yaml.AliasNode {
		return n.Value, true
	}
	if isPatchedAlias(n) {
		return n.Value[len(aliasMarker):], true
	}
	return "", false
}

// isPatchedAlias reports whether n is an alias patchAliases made a plain
// scalar.
func isPatchedAlias(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Style == 0 && strings.HasPrefix(n.Value, aliasMarker)
}

// patchAliases returns src with the '*' of every alias of goccy/go-yaml's
// tree f that has no anchor of its name before it replaced by aliasMarker;
// ok is false when there is none, or src already holds the marker, or an
// alias is not where its token says.
func patchAliases(src []byte, f *ast.File) (out []byte, ok bool) {
	if bytes.Contains(src, []byte(aliasMarker)) {
		return nil, false
	}
	var offs []int
	lines := newLineIndex(src)
	seen := map[string]bool{}
	for _, doc := range f.Docs {
		if doc == nil {
			continue
		}
		ok = true
		goccyWalk(doc.Body, "", func(n ast.Node, _ string, _ bool) bool {
			switch v := n.(type) {
			case *ast.AnchorNode:
				seen[tokenValue(v.Name)] = true
			case *ast.AliasNode:
				if seen[tokenValue(v.Value)] {
					return true
				}
				off := -1
				if tk := v.GetToken(); tk != nil && tk.Position != nil {
					off = goccyOffset(lines, tk.Position.Line, tk.Position.Column)
				}
				if off < 0 || src[off] != '*' {
					ok = false
					return false
				}
				offs = append(offs, off)
			}
			return true
		})
		if !ok {
			return nil, false
		}
	}
	if len(offs) == 0 {
		return nil, false
	}
	slices.Sort(offs)
	offs = slices.Compact(offs) // an alias key is met as a key and as a node
	out = make([]byte, 0, len(src)+len(offs)*len(aliasMarker))
	prev := 0
	for _, off := range offs {
		out = append(append(out, src[prev:off]...), aliasMarker...)
		prev = off + 1
	}
	return append(out, src[prev:]...), true
}

// goccyOffset is the offset in lines' text of goccy/go-yaml's line and
// column (in characters, tabs not counted); -1 when there is none.
func goccyOffset(lines *lineIndex, line, col int) int {
	if line < 1 || line > lines.count() {
		return -1
	}
	off, end := lines.start(line), lines.end(line)
	for off < end {
		if lines.src[off] != '\t' {
			if col--; col == 0 {
				return off
			}
		}
		_, size := utf8.DecodeRune(lines.src[off:end])
		off += size
	}
	return -1
}

// syntaxError reports a file yaml/v3 refused (v3err), as the user saw it
// before: the file is parsed by goccy/go-yaml (limits first, as before),
// whose limit or syntax error is the one reported. When goccy/go-yaml
// accepts it, a key too long for yaml/v3 is reported at the key (longKey),
// and anything else as yaml/v3's error at its line.
func (d *decoder) syntaxError(data []byte, v3err error) {
	f, err := parseYAML(data)
	if err != nil {
		d.goccyError(err)
		return
	}
	msg := v3err.Error()
	var body ast.Node
	for _, doc := range f.Docs {
		if doc != nil && !NodeIsNil(doc.Body) {
			body = doc.Body
			break
		}
	}
	if d.longKey(body) {
		return
	}
	p := d.start()
	if m := v3Line.FindStringSubmatch(msg); m != nil {
		if line, err := strconv.Atoi(m[1]); err == nil {
			p.Line = line
		}
		msg = m[2]
	}
	d.errAt(p, "", "YAML syntax error: %s", restore(v3Prefix.ReplaceAllString(msg, "")))
}

var (
	// v3Line matches the line yaml/v3 writes in most syntax errors.
	v3Line = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	// v3Prefix matches what yaml/v3 writes before any message.
	v3Prefix = regexp.MustCompile(`^yaml: `)
	// v3Anchor matches yaml/v3's error for an alias it found no anchor
	// before.
	v3Anchor = regexp.MustCompile(`^yaml: unknown anchor '.*' referenced$`)
)

// needsGoccy reports whether the file holds what goccy/go-yaml may have
// refused where yaml/v3 accepts it: a tag with no value after it ("key:
// !!str"), or a tab (goccy/go-yaml refused tabs in places yaml/v3 takes
// them as blanks, "{a:<TAB>b,<TAB>c: d}"); the file is parsed by
// goccy/go-yaml then, and its error, if any, is the one reported.
func (s *survey) needsGoccy(tabs bool) bool { return s.emptyTag || tabs }

// needsTokenCheck reports whether a limit of the file that goccy/go-yaml's
// tokens define (MaxTokens, MaxScalarSize, MaxNestingDepth) may be
// exceeded, by bounds that are never under the exact counts: marks is the
// pre-scan's count, never under the tokens' (FuzzPreScanAtLeastTheLexer);
// s.span, the most bytes between the lines of two nodes next to each
// other, is never under a token's length (a token holds no node's start);
// s.depth, the nesting of mappings and sequences in the tree, leaves
// depthMargin for what the tokens' count adds (a value on a line of its
// own, an indented comment line's neighbours; FuzzTokenChecksRunWhenNeeded
// holds it). When it is true the file's tokens are counted as before and a
// limit exceeded is reported as before; a large honest file never needs it.
func needsTokenCheck(marks int, s *survey) bool {
	return marks > MaxTokens || s.span > MaxScalarSize || s.depth > MaxNestingDepth-depthMargin
}

// depthMargin is how far under MaxNestingDepth a tree may nest before its
// tokens are counted for the exact depth (needsTokenCheck).
const depthMargin = 4

// tokenLimits counts data's tokens with goccy/go-yaml's lexer and returns
// the first limit they exceed (checkTokens), nil when none is.
func tokenLimits(data []byte) (le *limitError) {
	defer func() {
		if r := recover(); r != nil {
			le = nil
		}
	}()
	return checkTokens(lexer.Tokenize(string(data)))
}

// survey is what one walk of the tree finds before the decoder reads it:
// the bounds needsTokenCheck takes, the first key written twice in a
// mapping, and every anchor by name.
type survey struct {
	lines *lineIndex
	// depth is the deepest nesting of mappings and sequences, counting
	// the outermost as 1.
	depth int
	// span is the most bytes from the start of the line of one node to the
	// end of the line of the next one in the file (from the file's start
	// to the first node's line, from the last node's line to its end).
	span     int
	lastLine int
	// dup is the first key written twice in one mapping, in file order,
	// and first the earlier one; nil when there is none.
	dup, first *yaml.Node
	// anchors holds every anchor by name: the last one of a name wins.
	anchors map[string]*yaml.Node
	// emptyTag says a tag has no value (needsGoccy).
	emptyTag bool
	// explicit holds the keys written after '?' ("? name"), which
	// goccy/go-yaml's tree kept as keys of their own kind, not a name;
	// nil when the file holds no '?' followed by a blank.
	explicit map[*yaml.Node]bool
	// last is the file's last node.
	last *yaml.Node
}

// surveyDocs walks every document of the file.
func surveyDocs(docs []v3Doc, lines *lineIndex) *survey {
	s := &survey{lines: lines, lastLine: 0, anchors: map[string]*yaml.Node{}}
	if explicitKeyIndicator.Match(lines.src) {
		s.explicit = map[*yaml.Node]bool{}
	}
	for _, doc := range docs {
		if doc.body != nil {
			s.walk(doc.body, 0)
		}
	}
	s.spanTo(lines.count() + 1)
	return s
}

// spanTo takes a node on line (lines.count()+1 for the file's end).
func (s *survey) spanTo(line int) {
	if line <= s.lastLine {
		return
	}
	from := 0
	if s.lastLine > 0 {
		from = s.lines.start(s.lastLine)
	}
	if n := s.lines.end(line) - from; n > s.span {
		s.span = n
	}
	s.lastLine = line
}

func (s *survey) walk(n *yaml.Node, depth int) {
	s.spanTo(n.Line)
	s.last = n
	if n.Anchor != "" {
		s.anchors[n.Anchor] = n
	}
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		depth++
		s.depth = max(s.depth, depth)
	default:
		if n.Style == yaml.TaggedStyle && n.Value == "" {
			s.emptyTag = true
		}
		return
	}
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			s.walk(c, depth)
		}
		return
	}
	s.checkKeys(n.Content)
	for _, c := range n.Content {
		s.walk(c, depth)
	}
}

// explicitKeyIndicator matches a '?' that may start an explicit key.
var explicitKeyIndicator = regexp.MustCompile(`\?[ \t\r\n]|\?$`)

// afterQuestionMark reports whether only blanks and line ends separate the
// node n from a '?' before it: n is an explicit key.
func (l *lineIndex) afterQuestionMark(n *yaml.Node) bool {
	off := l.offset(n.Line, n.Column)
	for off > 0 {
		off--
		switch l.src[off] {
		case ' ', '\t', '\r', '\n':
			continue
		case '?':
			return true
		}
		return false
	}
	return false
}

// dupScan is how many keys a mapping may hold before its keys written
// twice are found through a set rather than by comparing each with those
// before it.
const dupScan = 16

// checkKeys finds the first key of a mapping (content: keys and values in
// turn) written twice, as goccy/go-yaml's parser did: the same text,
// quoted or not (a key that is not a scalar is never the same as
// another), and keeps it when it comes before the one kept so far.
func (s *survey) checkKeys(content []*yaml.Node) {
	var seen map[string]*yaml.Node
	if len(content)/2 > dupScan {
		seen = make(map[string]*yaml.Node, len(content)/2)
	}
	for i := 0; i < len(content); i += 2 {
		k := content[i]
		if s.explicit != nil && s.lines.afterQuestionMark(k) {
			s.explicit[k] = true
		}
		if k.Kind != yaml.ScalarNode {
			continue
		}
		var first *yaml.Node
		if seen != nil {
			first = seen[k.Value]
			if first == nil {
				seen[k.Value] = k
			}
		} else {
			for j := 0; j < i; j += 2 {
				if o := content[j]; o.Kind == yaml.ScalarNode && o.Value == k.Value {
					first = o
					break
				}
			}
		}
		if first != nil {
			if s.dup == nil || k.Line < s.dup.Line || k.Line == s.dup.Line && k.Column < s.dup.Column {
				s.dup, s.first = k, first
			}
			return
		}
	}
}

// maxKeyChars is the longest key, in characters, yaml/v3 reads without an
// explicit '?' (YAML's limit for an implicit key).
const maxKeyChars = 1024

// longKey reports the first key of goccy/go-yaml's tree of the document
// body longer than maxKeyChars, which yaml/v3 refuses: it is never a field
// of the file. It reports false, having reported nothing, when there is
// none.
func (d *decoder) longKey(body ast.Node) bool {
	var key ast.Node
	var at, text string
	goccyWalk(body, "", func(n ast.Node, path string, isKey bool) bool {
		if t, ok := NodeKeyText(n); isKey && ok && utf8.RuneCountInString(t) > maxKeyChars {
			key, at, text = n, JoinPath(path, t), t
			return false
		}
		return true
	})
	if key == nil {
		return false
	}
	d.errAt(d.goccyPosOf(key), at, "key %q is longer than the %d characters YAML allows a key; it is no field of the file", text, maxKeyChars)
	return true
}

// goccyPosOf is where goccy/go-yaml's node n starts.
func (d *decoder) goccyPosOf(n ast.Node) Position {
	p := d.start()
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		p.Line, p.Column = tk.Position.Line, tk.Position.Column
	}
	return p
}

// tokenValue is the text of n's token ("" for none).
func tokenValue(n ast.Node) string {
	if NodeIsNil(n) || n.GetToken() == nil {
		return ""
	}
	return n.GetToken().Value
}

// goccyWalk calls visit for every node of goccy/go-yaml's tree at n, in
// file order, with the path the decoder reads it under (a mapping's key
// and merge key (<<) under the mapping's path, a value under its key's, a
// list item under its own: "a.b[2]") and whether it is a key; it stops
// when visit returns false, and returns false then.
func goccyWalk(n ast.Node, path string, visit func(n ast.Node, path string, key bool) bool) bool {
	if NodeIsNil(n) {
		return true
	}
	if !visit(n, path, false) {
		return false
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		return goccyWalk(v.Value, path, visit)
	case *ast.TagNode:
		return goccyWalk(v.Value, path, visit)
	case *ast.MappingNode:
		for _, mv := range v.Values {
			if NodeIsNil(mv) {
				continue
			}
			if !NodeIsNil(mv.Key) && !visit(mv.Key, path, true) || !goccyWalk(keyValue(mv.Key), path, visit) {
				return false
			}
			vp := path
			if NodeIsNil(mv.Key) || mv.Key.Type() != ast.MergeKeyType {
				key, _ := NodeKeyText(mv.Key)
				vp = JoinPath(path, key)
			}
			if !goccyWalk(mv.Value, vp, visit) {
				return false
			}
		}
	case *ast.SequenceNode:
		for i, it := range v.Values {
			if !goccyWalk(it, fmt.Sprintf("%s[%d]", path, i), visit) {
				return false
			}
		}
	}
	return true
}

// keyValue is what a key wraps (an anchor's or a tag's value), nil for a
// plain key.
func keyValue(k ast.Node) ast.Node {
	switch v := k.(type) {
	case *ast.AnchorNode:
		return v.Value
	case *ast.TagNode:
		return v.Value
	case *ast.AliasNode:
		return v
	}
	return nil
}

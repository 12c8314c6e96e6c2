package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
	yaml "go.yaml.in/yaml/v3"

	"github.com/brightergo/brighter/internal/redact"
)

// scalar is a scalar value after ${VAR} expansion.
type scalar struct {
	text    string
	kind    ast.NodeType
	node    *yaml.Node
	fromEnv bool   // the text came out of ${VAR} expansion
	raw     string // the text as written, before expansion
}

// display shows the value as the user wrote it: strings quoted and cut at
// redact.MaxQuoted bytes; a value that came out of ${VAR} expansion as
// written ("${VAR}/x"), never expanded, saying so, so that the
// reader looks at the variable's value rather than at the file.
func (s scalar) display() string {
	switch {
	case s.kind == ast.NullType:
		return "an empty value"
	case s.fromEnv:
		return "the value of " + redact.Quote(s.raw) + " (not shown: environment values may be secrets)"
	case s.kind == ast.StringType, s.kind == ast.LiteralType:
		return redact.Quote(s.text)
	default:
		return redact.Cut(s.text)
	}
}

// shown is value (the parsed value, formatted) for an error, or the value
// as written when it came out of ${VAR} expansion.
func (s scalar) shown(value string) string {
	if s.fromEnv {
		return s.display()
	}
	return value
}

func (d *decoder) scalar(e entry) (scalar, bool) {
	n, ok := d.resolveOK(e.val, e.path)
	if !ok {
		return scalar{}, false
	}
	if n == nil {
		return scalar{kind: ast.NullType, node: e.keyN}, true
	}
	sc := scalar{kind: typeOf(n), node: n}
	switch sc.kind {
	case ast.NullType:
		return sc, true
	case ast.StringType, ast.LiteralType:
		sc.text = n.Value
	case ast.IntegerType, ast.FloatType, ast.BoolType, ast.InfinityType, ast.NanType:
		sc.text = n.Value
		return sc, true
	default:
		d.errorf(n, e.path, "must be a single value, got %s", kindOf(n))
		return sc, false
	}
	if strings.Contains(sc.text, "${") {
		var vals []string
		x, err := expandEnv(sc.text, func(k string) (string, bool) {
			v, ok := d.env(k)
			if ok && v != "" {
				vals = append(vals, v)
			}
			return v, ok
		})
		if err != nil {
			d.errorf(n, e.path, "%s", err.Error())
			return sc, false
		}
		if secretField(e.path) {
			d.f.envValues = append(d.f.envValues, vals...)
		}
		d.noteWritten(e.path, x, sc.text)
		sc.raw, sc.text, sc.fromEnv = sc.text, x, true
	}
	return sc, true
}

// noteWritten records that the field at path (a full YAML path) has the
// text raw in the file and value after ${VAR} expansion: by its path for
// the decoder's errors (writtenAt), and by its value for the findings about
// the subscription it belongs to (Subscription.AsWritten) and
// File.AsWritten. A value that expanded to nothing is not recorded by
// value: "" is no value a message quotes as the field's.
func (d *decoder) noteWritten(path, value, raw string) {
	if _, ok := d.raw[path]; !ok {
		if d.raw == nil {
			d.raw = map[string]string{}
		}
		d.raw[path] = raw
	}
	if value == "" || value == raw {
		return
	}
	if _, ok := d.f.written[value]; !ok {
		d.f.written[value] = raw
	}
	if d.sub != nil && strings.HasPrefix(path, d.subBase) {
		if d.sub.written == nil {
			d.sub.written = asWritten{}
		}
		if _, ok := d.sub.written[value]; !ok {
			d.sub.written[value] = raw
		}
	}
}

// str reads any scalar as text (null is ""). It reports false after an error.
func (d *decoder) str(e entry, dst *string) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	*dst = sc.text
	return true
}

// enum reads a string that must be one of valid, spelt as valid spells it
// (the JSON Schema's enum is case-sensitive too; a value in
// another case gets the canonical spelling as its suggestion).
func (d *decoder) enum(e entry, dst *string, noun string, valid []string) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	if v, ok := matchEnum(sc.text, valid); ok {
		*dst = v
		return true
	}
	if sc.kind == ast.NullType {
		d.errorf(sc.node, e.path, "must not be empty; valid values are %s", strings.Join(valid, ", "))
		return false
	}
	d.errorf(sc.node, e.path, "unknown %s %s%s; valid values are %s", noun, sc.display(), suggestion(sc.text, valid), strings.Join(valid, ", "))
	return false
}

func matchEnum(s string, valid []string) (string, bool) {
	for _, v := range valid {
		if s == v {
			return v, true
		}
	}
	return "", false
}

// intIn reads an integer in lo..hi (math.MinInt / math.MaxInt for no
// bound). valid, when not "", is what an out-of-range error says the valid
// values are ("valid values are ..."), in place of the bounds: for a field
// whose every 64-bit integer is accepted, what its values mean.
func (d *decoder) intIn(e entry, dst *int, lo, hi int, valid string) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	rangeOf := func(bounds string) string {
		if valid != "" {
			return valid
		}
		return "valid values are " + bounds
	}
	var v int
	switch {
	case sc.kind == ast.IntegerType:
		parsed := false
		if num := token.ToNumber(sc.text); num != nil {
			switch x := num.Value.(type) {
			case int64:
				if x >= math.MinInt && x <= math.MaxInt {
					v, parsed = int(x), true
				}
			case uint64:
				if x <= math.MaxInt {
					v, parsed = int(x), true
				}
			}
		}
		if !parsed {
			d.rangeErrText(e, sc.text, rangeOf(bothBounds(lo, hi)))
			return false
		}
	case sc.kind == ast.FloatType:
		// 3.0 is the integer 3, as JSON Schema's "integer" takes it.
		f, err := strconv.ParseFloat(strings.ReplaceAll(sc.text, "_", ""), 64)
		if err != nil || f != math.Trunc(f) {
			d.errorf(sc.node, e.path, "must be an integer, got %s", sc.display())
			return false
		}
		if f < math.MinInt64 || f >= math.MaxInt64 {
			d.rangeErrText(e, sc.text, rangeOf(bothBounds(lo, hi)))
			return false
		}
		v = int(f)
	case sc.fromEnv || allDigits.MatchString(sc.text) && plain(sc.node):
		x, err := strconv.Atoi(strings.TrimSpace(sc.text))
		if errors.Is(err, strconv.ErrRange) {
			d.rangeErrText(e, sc.shown(strings.TrimSpace(sc.text)), rangeOf(bothBounds(lo, hi)))
			return false
		}
		if err != nil {
			d.errorf(sc.node, e.path, "must be an integer, got %s", sc.display())
			return false
		}
		v = x
	default:
		d.errorf(sc.node, e.path, "must be an integer, got %s", sc.display())
		return false
	}
	if v < lo || v > hi {
		d.rangeErrText(e, sc.shown(strconv.Itoa(v)), rangeOf(intRange(lo, hi)))
		return false
	}
	*dst = v
	return true
}

// plain reports whether n was written without quotes (a quoted "3" is a
// string, as in JSON).
func plain(n *yaml.Node) bool {
	return n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0
}

// allDigits matches an integer written in decimal (one too large for int64
// is still an integer, reported as out of range).
var allDigits = regexp.MustCompile(`^\s*[-+]?[0-9]+\s*$`)

func intRange(lo, hi int) string {
	switch {
	case lo == math.MinInt && hi == math.MaxInt:
		return "any integer"
	case hi == math.MaxInt:
		return fmt.Sprintf(">= %d", lo)
	default:
		return fmt.Sprintf("%d..%d", lo, hi)
	}
}

// bothBounds names the integers from lo to hi with both bounds: for a value
// beyond int64, which "any integer" or ">= 0" would seem to allow.
func bothBounds(lo, hi int) string { return fmt.Sprintf("%d..%d", lo, hi) }

func (d *decoder) rangeErr(e entry, got, valid string) {
	d.rangeErrText(e, got, "valid values are "+valid)
}

// rangeErrText is rangeErr with the text after "is out of range; " whole.
// got is the value of e's field; when it came out of ${VAR} expansion the
// error shows the field's text as written instead (as scalar.display
// does), whoever formatted got: a transport's range is checked after the
// field was read.
func (d *decoder) rangeErrText(e entry, got, valid string) {
	n := d.resolve(e.val, e.path)
	if n == nil {
		n = e.keyN
	}
	if raw, ok := d.raw[e.path]; ok {
		got = scalar{fromEnv: true, raw: raw}.display()
	}
	d.errorf(n, e.path, "%s is out of range; %s", got, valid)
}

// durRange bounds a duration: min..max (max 0 = no upper bound); positive
// requires > 0.
type durRange struct {
	min, max time.Duration
	positive bool
}

// durationSyntax is the shape of a Go duration (time.ParseDuration's
// grammar): a text of that shape that does not parse overflowed.
var durationSyntax = regexp.MustCompile(`^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// dur reads a Go duration string (300ms, 30s, 1m); a bare 0 is accepted.
func (d *decoder) dur(e entry, dst *time.Duration, r durRange) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	var v time.Duration
	switch {
	case sc.kind == ast.IntegerType && sc.text == "0":
		v = 0
	case sc.kind == ast.StringType || sc.kind == ast.LiteralType:
		x, err := time.ParseDuration(strings.TrimSpace(sc.text))
		if err != nil && durationSyntax.MatchString(strings.TrimSpace(sc.text)) {
			d.errorf(sc.node, e.path, "%s is too long a duration to hold; the longest is 2562047h (about 292 years)", sc.display())
			return false
		}
		if err != nil {
			d.errorf(sc.node, e.path, "%s is not a duration; use a Go duration such as 300ms, 30s or 1m", sc.display())
			return false
		}
		v = x
	default:
		d.errorf(sc.node, e.path, "%s is not a duration; use a Go duration such as 300ms, 30s or 1m", sc.display())
		return false
	}
	switch {
	case r.positive && v <= 0:
		d.rangeErr(e, sc.shown(FormatDuration(v)), "> 0s")
		return false
	case v < r.min:
		valid := ">= " + FormatDuration(r.min)
		if r.max > 0 {
			valid = FormatDuration(r.min) + ".." + FormatDuration(r.max)
		}
		d.rangeErr(e, sc.shown(FormatDuration(v)), valid)
		return false
	case r.max > 0 && v > r.max:
		d.rangeErr(e, sc.shown(FormatDuration(v)), FormatDuration(r.min)+".."+FormatDuration(r.max))
		return false
	}
	*dst = v
	return true
}

// FormatDuration writes a duration without trailing zero units, the way
// the subscriptions file is written: 12h, 1m30s, 300ms (not 12h0m0s).
func FormatDuration(v time.Duration) string {
	s := v.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// boolean reads true or false.
func (d *decoder) boolean(e entry, dst *bool) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	if sc.kind == ast.BoolType {
		*dst = sc.text == "true" || sc.text == "True" || sc.text == "TRUE"
		return true
	}
	if sc.fromEnv {
		if b, err := strconv.ParseBool(strings.TrimSpace(sc.text)); err == nil {
			*dst = b
			return true
		}
	}
	d.errorf(sc.node, e.path, "must be true or false, got %s", sc.display())
	return false
}

// strMap reads a mapping of names to scalar values (text after expansion).
func (d *decoder) strMap(e entry) map[string]string {
	ents, ok := d.mapEntries(e.val, e.path, nil)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(ents))
	for _, e := range ents {
		var s string
		if d.str(e, &s) {
			out[e.key] = s
		}
	}
	return out
}

// strList reads a list of scalar values.
func (d *decoder) strList(e entry) []string {
	n := d.resolve(e.val, e.path)
	if n == nil || typeOf(n) == ast.NullType {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, e.path, "must be a list, got %s", kindOf(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, it := range n.Content {
		item := entry{key: e.key, keyN: it, val: it, path: fmt.Sprintf("%s[%d]", e.path, i)}
		var s string
		if d.str(item, &s) {
			d.record(item.path, d.posOf(it), false)
			out = append(out, s)
		}
	}
	return out
}

// httpURL checks that s is an absolute http or https URL.
func (d *decoder) httpURL(e entry, s string) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		example := "http://localhost:8080/handle" // a handler's URL
		if strings.HasSuffix(e.path, "endpoint") {
			example = "http://localhost:4566" // a broker's (an emulator's) endpoint
		}
		d.errorf(d.resolve(e.val, e.path), e.path, "%s is not an http or https URL (such as %s)", redact.Quote(redact.URL(d.writtenAt(e.path, s))), example)
	}
}

// secretField reports whether the ${VAR} values of the field at path are
// secrets of the run (File.Secrets): every field of a handler block (its
// url, headers, env, args, command, script: what a handler sends or hands
// to its program) and the connections' access and secret keys. The
// ${VAR} values of the other fields name what an operator must see in
// every log line (channels, routing keys, topics, groups, projects,
// endpoints) or are numbers, durations, booleans and enums; the
// credentials a URL among them carries are secrets by redact.URLSecrets.
func secretField(path string) bool {
	return strings.Contains(path, ".handler.") || strings.HasSuffix(path, ".handler") ||
		strings.HasSuffix(path, ".accessKey") || strings.HasSuffix(path, ".secretKey")
}

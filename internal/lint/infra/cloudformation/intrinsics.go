package cloudformation

import (
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
	"github.com/brightergo/brighter/internal/lint/infra/yamldoc"
)

// shortForms maps each YAML short-form tag to the function it stands for.
var shortForms = map[string]string{
	"!Ref": "Ref", "!Condition": "Condition",
	"!Base64": "Fn::Base64", "!Cidr": "Fn::Cidr", "!FindInMap": "Fn::FindInMap", "!GetAtt": "Fn::GetAtt",
	"!GetAZs": "Fn::GetAZs", "!ImportValue": "Fn::ImportValue", "!Join": "Fn::Join", "!Select": "Fn::Select",
	"!Split": "Fn::Split", "!Sub": "Fn::Sub", "!Transform": "Fn::Transform", "!And": "Fn::And",
	"!Equals": "Fn::Equals", "!If": "Fn::If", "!Not": "Fn::Not", "!Or": "Fn::Or",
	"!ToJsonString": "Fn::ToJsonString", "!Length": "Fn::Length",
}

var unknown = val{state: infra.Unknown}

// eval resolves the expression n (a scalar or an intrinsic function) as far
// as the template fixes it. ok is false when a problem was recorded.
func (t *template) eval(n ast.Node, field string) (val, bool) {
	t.depth++
	defer func() { t.depth-- }()
	if t.depth > MaxDepth {
		t.f.Errorf(n, field, "intrinsic functions nest deeper than the limit of %d levels here (a reference loop?)", MaxDepth)
		return unknown, false
	}
	tag, v, ok := t.f.Untag(0, n, field)
	if !ok {
		return unknown, false
	}
	if tag != "" && !strings.HasPrefix(tag, "!!") {
		fn, known := shortForms[tag]
		if !known {
			t.f.Errorf(n, field, "%s is not a CloudFormation intrinsic function tag", tag)
			return unknown, false
		}
		return t.call(fn, v, n, field)
	}
	switch v.(type) {
	case *ast.MappingNode:
		ents, ok := t.f.Entries(0, v, field)
		if !ok {
			return unknown, false
		}
		if len(ents) == 1 && (ents[0].Key == "Ref" || ents[0].Key == "Condition" || strings.HasPrefix(ents[0].Key, "Fn::")) {
			return t.call(ents[0].Key, ents[0].Val, v, ents[0].Field)
		}
		t.f.Errorf(v, field, "must be a string, number or boolean, or an intrinsic function; got a mapping")
		return unknown, false
	case *ast.SequenceNode:
		t.f.Errorf(v, field, "must be a string, number or boolean, or an intrinsic function; got a list")
		return unknown, false
	}
	s, kind := yamldoc.Scalar(v)
	switch kind {
	case yamldoc.NotScalar:
		t.f.Errorf(v, field, "must be a string, number or boolean, got %s", yamldoc.KindOf(v))
		return unknown, false
	case yamldoc.Null:
		return val{}, true
	}
	return val{s: s, state: infra.Known}, true
}

// call resolves the intrinsic fn applied to arg; at is the whole
// expression, where a reference to nothing is reported.
func (t *template) call(fn string, arg, at ast.Node, field string) (val, bool) {
	switch fn {
	case "Ref":
		name, ok := t.literal(arg, field, fn)
		if !ok {
			return unknown, false
		}
		return t.ref(at, name, field)
	case "Fn::GetAtt":
		return t.getAtt(arg, at, field)
	case "Fn::Sub":
		return t.sub(arg, field)
	case "Fn::Join":
		return t.join(arg, field)
	case "Fn::Select":
		return t.sel(arg, field)
	case "Fn::FindInMap":
		return t.findInMap(arg, field)
	}
	if _, ok := shortForms["!"+strings.TrimPrefix(fn, "Fn::")]; !ok {
		t.f.Errorf(arg, field, "%s is not a CloudFormation intrinsic function", fn)
		return unknown, false
	}
	// Fn::If, Fn::ImportValue, Fn::GetAZs...: decided at deploy time.
	return unknown, true
}

// literal reads arg as a plain string (the argument of Ref).
func (t *template) literal(arg ast.Node, field, fn string) (string, bool) {
	tag, v, ok := t.f.Untag(0, arg, field)
	if !ok {
		return "", false
	}
	s, kind := yamldoc.Scalar(v)
	if (tag != "" && !strings.HasPrefix(tag, "!!")) || kind != yamldoc.String {
		t.f.Errorf(v, field, "%s takes a name, got %s", fn, yamldoc.KindOf(v))
		return "", false
	}
	return s, true
}

// ref resolves Ref name: AWS::NoValue is Unset; other pseudo parameters,
// a parameter without a default or read from SSM, and a resource are
// Unknown (the resource recorded); a parameter's default is its value.
func (t *template) ref(at ast.Node, name, field string) (val, bool) {
	if name == "AWS::NoValue" {
		return val{}, true
	}
	if strings.HasPrefix(name, "AWS::") {
		return unknown, true
	}
	if p, ok := t.params[name]; ok {
		if p.def == nil || strings.HasPrefix(p.typ, "AWS::SSM::Parameter::") {
			return unknown, true
		}
		tag, v, ok := t.f.Untag(0, p.def, field)
		if !ok {
			return unknown, false
		}
		if seq, isSeq := v.(*ast.SequenceNode); isSeq && tag == "" {
			// A list parameter's default written as a list.
			parts := make([]string, 0, len(seq.Values))
			for _, it := range seq.Values {
				s, _ := yamldoc.Scalar(it)
				parts = append(parts, s)
			}
			return val{s: strings.Join(parts, ","), state: infra.Known}, true
		}
		s, kind := yamldoc.Scalar(v)
		if kind == yamldoc.NotScalar || (tag != "" && !strings.HasPrefix(tag, "!!")) {
			t.f.Errorf(v, field, "the Default of parameter %s must be a plain value, got %s", name, yamldoc.KindOf(v))
			return unknown, false
		}
		return val{s: s, state: infra.Known}, true
	}
	if _, ok := t.resources[name]; ok {
		return val{state: infra.Unknown, ref: name}, true
	}
	t.f.Errorf(at, field, "Ref %s names no parameter or resource of the template", name)
	return unknown, false
}

// getAtt resolves Fn::GetAtt, written "Id.Attr" or [Id, Attr].
func (t *template) getAtt(arg, at ast.Node, field string) (val, bool) {
	tag, v, ok := t.f.Untag(0, arg, field)
	if !ok {
		return unknown, false
	}
	var id, attr string
	if seq, isSeq := v.(*ast.SequenceNode); isSeq && tag == "" {
		if len(seq.Values) != 2 {
			t.f.Errorf(v, field, "Fn::GetAtt takes [LogicalId, Attribute], got %d items", len(seq.Values))
			return unknown, false
		}
		idv, ok := t.literal(seq.Values[0], field, "Fn::GetAtt")
		if !ok {
			return unknown, false
		}
		av, ok := t.eval(seq.Values[1], field)
		if !ok {
			return unknown, false
		}
		id, attr = idv, av.s
		if av.state != infra.Known {
			return t.attr(at, id, "", field)
		}
	} else {
		s, ok := t.literal(v, field, "Fn::GetAtt")
		if !ok {
			return unknown, false
		}
		var found bool
		id, attr, found = strings.Cut(s, ".")
		if !found {
			t.f.Errorf(v, field, "Fn::GetAtt takes LogicalId.Attribute, got %q", s)
			return unknown, false
		}
	}
	return t.attr(at, id, attr, field)
}

// attr resolves attribute attr of resource id: a queue's QueueName when
// its template fixes it; otherwise Unknown, referring to the resource.
func (t *template) attr(at ast.Node, id, attr, field string) (val, bool) {
	r, ok := t.resources[id]
	if !ok {
		t.f.Errorf(at, field, "Fn::GetAtt names %s, which is no resource of the template", id)
		return unknown, false
	}
	if r.typ != TypeQueue || attr != "QueueName" {
		return val{state: infra.Unknown, ref: id}, true
	}
	if v, seen := t.names[id]; seen {
		if v == nil {
			t.f.Errorf(at, field, "Fn::GetAtt %s.QueueName is part of a loop: QueueName properties refer to each other", id)
			return unknown, false
		}
		return *v, true
	}
	t.names[id] = nil
	res := val{state: infra.Unknown, ref: id}
	ok = true
	if e := yamldoc.Find(r.props, "QueueName"); e != nil {
		var v val
		v, ok = t.eval(e.Val, e.Field)
		if v.state == infra.Known {
			res = val{s: v.s, state: infra.Known}
		}
	}
	t.names[id] = &res
	return res, ok
}

// sub resolves Fn::Sub: "text ${Name} ${Id.Attr} ${!Literal}" or
// [text, {Name: value}].
func (t *template) sub(arg ast.Node, field string) (val, bool) {
	tag, v, ok := t.f.Untag(0, arg, field)
	if !ok {
		return unknown, false
	}
	text := arg
	var vars []yamldoc.Entry
	if seq, isSeq := v.(*ast.SequenceNode); isSeq && tag == "" {
		if len(seq.Values) != 2 {
			t.f.Errorf(v, field, "Fn::Sub takes a string or [string, {variables}], got %d items", len(seq.Values))
			return unknown, false
		}
		text = seq.Values[0]
		if vars, ok = t.f.Entries(0, seq.Values[1], field); !ok {
			return unknown, false
		}
	}
	s, ok := t.literal(text, field, "Fn::Sub")
	if !ok {
		return unknown, false
	}
	var b strings.Builder
	state := infra.Known
	parts := 0
	var only val
	for s != "" {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			parts++
			break
		}
		b.WriteString(s[:i])
		if i > 0 {
			parts++
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			b.WriteString(s[i:])
			parts++
			break
		}
		name := strings.TrimSpace(s[i+2 : i+end])
		s = s[i+end+1:]
		parts++
		if strings.HasPrefix(name, "!") {
			b.WriteString("${" + name[1:] + "}")
			continue
		}
		var r val
		if e := yamldoc.Find(vars, name); e != nil {
			r, ok = t.eval(e.Val, e.Field)
		} else if id, attr, dotted := strings.Cut(name, "."); dotted {
			r, ok = t.attr(text, id, attr, field)
		} else {
			r, ok = t.ref(text, name, field)
		}
		if !ok {
			return unknown, false
		}
		only = r
		if r.state != infra.Known {
			state = infra.Unknown
			continue
		}
		b.WriteString(r.s)
		if b.Len() > config.MaxScalarSize {
			return t.tooLong(text, field)
		}
	}
	if parts == 1 && only.state != infra.Unset {
		// "${DLQ.Arn}" alone is the attribute itself, its reference kept.
		return only, true
	}
	if state != infra.Known {
		return unknown, true
	}
	return val{s: b.String(), state: infra.Known}, true
}

// join resolves Fn::Join [delimiter, [values]].
func (t *template) join(arg ast.Node, field string) (val, bool) {
	items, ok := t.args(arg, field, "Fn::Join", 2)
	if !ok {
		return unknown, false
	}
	delim, ok := t.eval(items[0], field)
	if !ok {
		return unknown, false
	}
	tag, lv, ok := t.f.Untag(0, items[1], field)
	if !ok {
		return unknown, false
	}
	seq, isSeq := lv.(*ast.SequenceNode)
	if !isSeq || tag != "" {
		// The list is itself an intrinsic (!Split, !GetAZs...).
		if _, ok := t.eval(items[1], field); !ok {
			return unknown, false
		}
		return unknown, true
	}
	parts := make([]string, 0, len(seq.Values))
	state := delim.state
	size := 0
	for _, it := range seq.Values {
		v, ok := t.eval(it, field)
		if !ok {
			return unknown, false
		}
		if v.state == infra.Unknown {
			state = infra.Unknown
		}
		size += len(v.s) + len(delim.s)
		if size > config.MaxScalarSize {
			return t.tooLong(it, field)
		}
		parts = append(parts, v.s)
	}
	if state != infra.Known {
		return unknown, true
	}
	return val{s: strings.Join(parts, delim.s), state: infra.Known}, true
}

// sel resolves Fn::Select [index, [values]].
func (t *template) sel(arg ast.Node, field string) (val, bool) {
	items, ok := t.args(arg, field, "Fn::Select", 2)
	if !ok {
		return unknown, false
	}
	idx, ok := t.eval(items[0], field)
	if !ok {
		return unknown, false
	}
	tag, lv, ok := t.f.Untag(0, items[1], field)
	if !ok {
		return unknown, false
	}
	seq, isSeq := lv.(*ast.SequenceNode)
	if idx.state != infra.Known || !isSeq || tag != "" {
		return unknown, true
	}
	i, err := strconv.Atoi(idx.s)
	if err != nil || i < 0 || i >= len(seq.Values) {
		t.f.Errorf(items[0], field, "Fn::Select index %q is not one of the list's %d items", idx.s, len(seq.Values))
		return unknown, false
	}
	return t.eval(seq.Values[i], field)
}

// findInMap resolves Fn::FindInMap [MapName, TopKey, SecondKey] from the
// template's Mappings.
func (t *template) findInMap(arg ast.Node, field string) (val, bool) {
	items, ok := t.args(arg, field, "Fn::FindInMap", 3)
	if !ok {
		return unknown, false
	}
	n := ast.Node(nil)
	ents := t.mappings
	for i, it := range items[:3] {
		k, ok := t.eval(it, field)
		if !ok {
			return unknown, false
		}
		if k.state != infra.Known {
			return unknown, true
		}
		e := yamldoc.Find(ents, k.s)
		if e == nil {
			return unknown, true
		}
		n = e.Val
		if i < 2 {
			if ents, ok = t.f.Entries(0, e.Val, e.Field); !ok {
				return unknown, false
			}
		}
	}
	return t.eval(n, field)
}

// args reads arg as a list of at least n items.
func (t *template) args(arg ast.Node, field, fn string, n int) ([]ast.Node, bool) {
	tag, v, ok := t.f.Untag(0, arg, field)
	if !ok {
		return nil, false
	}
	seq, isSeq := v.(*ast.SequenceNode)
	if !isSeq || tag != "" || len(seq.Values) < n {
		t.f.Errorf(v, field, "%s takes a list of %d items, got %s", fn, n, yamldoc.KindOf(v))
		return nil, false
	}
	return seq.Values, true
}

func (t *template) tooLong(at ast.Node, field string) (val, bool) {
	t.f.Errorf(at, field, "intrinsic functions build a value over the limit of %d bytes here", config.MaxScalarSize)
	return unknown, false
}

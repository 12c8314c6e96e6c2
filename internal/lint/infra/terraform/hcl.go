package terraform

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
)

// ReadHCL reads the resources of one .tf file. Variables with a default
// (in this file) and locals are evaluated; a variable without a default,
// a reference to a resource, data source or module, and anything else
// decided at plan time is Unknown (a reference to a resource of a read
// type keeps its address in Value.Ref). A syntax error is an *infra.Error
// at its line and column; a file nested deeper than infra.MaxNestingDepth
// is refused before the parser runs.
func ReadHCL(name string, data []byte) ([]infra.Resource, error) {
	if line, col, ok := tooDeep(data, infra.MaxNestingDepth); ok {
		return nil, infra.Errorf(config.Position{File: name, Line: line, Column: col},
			"brackets and blocks nest deeper than %d, the limit for an infrastructure file", infra.MaxNestingDepth)
	}
	f, diags := hclsyntax.ParseConfig(data, name, hcl.InitialPos)
	if diags.HasErrors() {
		d := diags[0]
		pos := config.Position{File: name}
		if d.Subject != nil {
			pos.Line, pos.Column = d.Subject.Start.Line, d.Subject.Start.Column
		}
		return nil, infra.Errorf(pos, "%s: %s", d.Summary, d.Detail)
	}
	b, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return nil, infra.Errorf(config.Position{File: name, Line: 1, Column: 1}, "not an HCL native syntax file")
	}
	ctx := evalContext(b)
	var out []infra.Resource
	for _, blk := range b.Blocks {
		if blk.Type != "resource" || len(blk.Labels) != 2 {
			continue
		}
		hb := &hclBody{b: blk.Body, ctx: ctx, name: name, pos: posOf(name, blk.TypeRange.Start)}
		if r, ok := build(blk.Labels[0], blk.Labels[0]+"."+blk.Labels[1], hb); ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// tooDeep reports where data first nests brackets ({ [ () deeper than
// limit, outside quoted strings and comments (a bound, so a lexer-level
// approximation is enough: heredocs count their brackets too).
func tooDeep(data []byte, limit int) (line, col int, deep bool) {
	depth, line, col := 0, 1, 0
	inStr, inComment := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		col++
		if c == '\n' {
			line, col, inComment = line+1, 0, false
			continue
		}
		switch {
		case inComment:
		case inStr:
			if c == '\\' {
				i++
				col++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '#' || (c == '/' && i+1 < len(data) && data[i+1] == '/'):
			inComment = true
		case c == '{' || c == '[' || c == '(':
			depth++
			if depth > limit {
				return line, col, true
			}
		case c == '}' || c == ']' || c == ')':
			depth = max(depth-1, 0)
		}
	}
	return 0, 0, false
}

func posOf(file string, p hcl.Pos) config.Position {
	return config.Position{File: file, Line: p.Line, Column: p.Column}
}

// evalContext evaluates the file's variables (their defaults; unknown
// without one) and locals (unknown where they cannot be evaluated), with
// the functions a queue's policy is written with.
func evalContext(b *hclsyntax.Body) *hcl.EvalContext {
	vars := map[string]cty.Value{}
	for _, blk := range b.Blocks {
		if blk.Type != "variable" || len(blk.Labels) != 1 {
			continue
		}
		v := cty.DynamicVal
		if a, ok := blk.Body.Attributes["default"]; ok {
			if d, diags := a.Expr.Value(nil); !diags.HasErrors() {
				v = d
			}
		}
		vars[blk.Labels[0]] = v
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)},
		Functions: map[string]function.Function{
			"jsonencode": stdlib.JSONEncodeFunc, "jsondecode": stdlib.JSONDecodeFunc,
			"format": stdlib.FormatFunc, "lower": stdlib.LowerFunc, "upper": stdlib.UpperFunc,
			"join": stdlib.JoinFunc, "max": stdlib.MaxFunc, "min": stdlib.MinFunc,
			"tostring": stdlib.MakeToFunc(cty.String), "tonumber": stdlib.MakeToFunc(cty.Number),
			"tobool": stdlib.MakeToFunc(cty.Bool), "coalesce": stdlib.CoalesceFunc,
		},
	}
	// Locals, in order; one that refers to another later in the file is
	// unknown rather than guessed.
	locals := map[string]cty.Value{}
	for _, blk := range b.Blocks {
		if blk.Type != "locals" {
			continue
		}
		for name, a := range blk.Body.Attributes {
			ctx.Variables["local"] = cty.ObjectVal(locals)
			locals[name] = eval(ctx, a.Expr)
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return ctx
}

// eval evaluates e, with every root it refers to that ctx does not know
// (a resource type, data, module, count, each, path) unknown, and any
// error unknown.
func eval(ctx *hcl.EvalContext, e hclsyntax.Expression) cty.Value {
	c := ctx.NewChild()
	c.Variables = map[string]cty.Value{}
	for _, t := range e.Variables() {
		root := t.RootName()
		if _, ok := ctx.Variables[root]; !ok {
			c.Variables[root] = cty.DynamicVal
		}
	}
	v, diags := e.Value(c)
	if diags.HasErrors() {
		return cty.DynamicVal
	}
	return v
}

// refOf returns the address of the one resource of a read type e refers
// to, or "".
func refOf(e hclsyntax.Expression) string {
	ref := ""
	for _, t := range e.Variables() {
		var parts []string
		for _, s := range t {
			switch x := s.(type) {
			case hcl.TraverseRoot:
				parts = append(parts, x.Name)
			case hcl.TraverseAttr:
				parts = append(parts, x.Name)
			}
		}
		if r := resourceRef(parts); r != "" {
			if ref != "" && ref != r {
				return ""
			}
			ref = r
		}
	}
	return ref
}

// hclBody is a resource's or nested block's body.
type hclBody struct {
	b    *hclsyntax.Body
	ctx  *hcl.EvalContext
	name string
	pos  config.Position
}

func (h *hclBody) field(e hclsyntax.Expression, at hcl.Pos) field {
	v := eval(h.ctx, e)
	f := field{val: v, set: true, pos: posOf(h.name, at)}
	if !v.IsWhollyKnown() {
		f.ref = refOf(e)
	}
	return f
}

func (h *hclBody) attr(name string) field {
	a, ok := h.b.Attributes[name]
	if !ok {
		return field{}
	}
	return h.field(a.Expr, a.NameRange.Start)
}

func (h *hclBody) block(name string) (body, field) {
	for _, blk := range h.b.Blocks {
		if blk.Type == name {
			p := posOf(h.name, blk.TypeRange.Start)
			return &hclBody{b: blk.Body, ctx: h.ctx, name: h.name, pos: p}, field{set: true, pos: p, val: cty.EmptyObjectVal}
		}
	}
	return nil, field{}
}

// object reads jsonencode({...}) item by item, each at its key, so that
// one unknown item leaves the others known; any other expression is
// evaluated and, when a known string, decoded as JSON.
func (h *hclBody) object(name string) (body, field) {
	a, ok := h.b.Attributes[name]
	if !ok {
		return nil, field{}
	}
	f := h.field(a.Expr, a.NameRange.Start)
	if call, ok := a.Expr.(*hclsyntax.FunctionCallExpr); ok && call.Name == "jsonencode" && len(call.Args) == 1 {
		if obj, ok := call.Args[0].(*hclsyntax.ObjectConsExpr); ok {
			ob := &objBody{h: h, items: map[string]hclsyntax.ObjectConsItem{}, pos: f.pos}
			for _, it := range obj.Items {
				k, diags := it.KeyExpr.Value(nil)
				if diags.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
					continue
				}
				ob.items[k.AsString()] = it
			}
			return ob, f
		}
	}
	if f.val.IsWhollyKnown() && !f.val.IsNull() && f.val.Type() == cty.String {
		if jb := decodeJSONObject(f.val.AsString(), f.pos); jb != nil {
			return jb, f
		}
	}
	return nil, f
}

func (h *hclBody) at() config.Position { return h.pos }

// objBody is the object of a jsonencode({...}), each item at its key.
type objBody struct {
	h     *hclBody
	items map[string]hclsyntax.ObjectConsItem
	pos   config.Position
}

func (o *objBody) attr(name string) field {
	it, ok := o.items[name]
	if !ok {
		return field{}
	}
	return o.h.field(it.ValueExpr, it.KeyExpr.StartRange().Start)
}

func (o *objBody) block(string) (body, field)  { return nil, field{} }
func (o *objBody) object(string) (body, field) { return nil, field{} }
func (o *objBody) at() config.Position         { return o.pos }

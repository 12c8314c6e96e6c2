package terraform

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/zclconf/go-cty/cty"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
)

// ReadPlan reads the resources of one `terraform show -json PLAN` output:
// each resource change that is not a delete, with its planned values
// (change.after) and those the plan marks unknown (change.after_unknown)
// Unknown. An unknown redrive policy refers to the queue its configuration
// expression references (configuration.root_module), when it is one.
// Positions are the keys' in the JSON. A file that is not a plan of a
// format version terraform-json reads, or nests deeper than
// infra.MaxNestingDepth, is an *infra.Error.
func ReadPlan(name string, data []byte) ([]infra.Resource, error) {
	idx, err := indexJSON(name, data)
	if err != nil {
		return nil, err
	}
	var p tfjson.Plan
	p.UseJSONNumber(true)
	if err := json.Unmarshal(data, &p); err != nil {
		pos := config.Position{File: name, Line: 1, Column: 1}
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			pos = idx.position(int(se.Offset))
		case errors.As(err, &te):
			pos = idx.position(int(te.Offset))
		}
		return nil, infra.Errorf(pos, "not a Terraform plan (terraform show -json): %v", err)
	}
	refs := configRefs(&p)
	var out []infra.Resource
	for i, rc := range p.ResourceChanges {
		if rc == nil || rc.Change == nil || rc.Mode != tfjson.ManagedResourceMode || rc.Change.Actions.Delete() || rc.Change.Actions.Forget() {
			continue
		}
		after, _ := rc.Change.After.(map[string]any)
		if after == nil {
			continue
		}
		unk, _ := rc.Change.AfterUnknown.(map[string]any)
		path := "resource_changes/" + strconv.Itoa(i)
		b := &planBody{m: after, unk: unk, idx: idx, path: path + "/change/after", pos: idx.at(path)}
		if rc.ModuleAddress == "" {
			b.refs = refs[rc.Type+"."+rc.Name]
		}
		if r, ok := build(rc.Type, rc.Address, b); ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// configRefs returns, per root-module resource address, the resource each
// expression refers to (the one resource of a read type its references
// name).
func configRefs(p *tfjson.Plan) map[string]map[string]string {
	out := map[string]map[string]string{}
	if p.Config == nil || p.Config.RootModule == nil {
		return out
	}
	for _, r := range p.Config.RootModule.Resources {
		if r == nil {
			continue
		}
		m := map[string]string{}
		for attr, e := range r.Expressions {
			if e == nil || e.ExpressionData == nil {
				continue
			}
			ref := ""
			for _, s := range e.References {
				if rr := resourceRef(strings.Split(s, ".")); rr != "" {
					if ref != "" && ref != rr {
						ref = ""
						break
					}
					ref = rr
				}
			}
			if ref != "" {
				m[attr] = ref
			}
		}
		out[r.Address] = m
	}
	return out
}

// planBody is a resource's planned values, or a nested block's.
type planBody struct {
	m    map[string]any
	unk  map[string]any
	idx  *jsonIndex
	path string
	pos  config.Position
	refs map[string]string
}

func (b *planBody) attr(name string) field {
	pos := b.idx.atOr(b.path+"/"+name, b.pos)
	if u, ok := b.unk[name].(bool); ok && u {
		return field{val: cty.DynamicVal, set: true, pos: pos, ref: b.refs[name]}
	}
	v, ok := b.m[name]
	if !ok {
		return field{}
	}
	return field{val: fromGo(v), set: true, pos: pos}
}

func (b *planBody) block(name string) (body, field) {
	pos := b.idx.atOr(b.path+"/"+name, b.pos)
	if u, ok := b.unk[name].(bool); ok && u {
		return nil, field{val: cty.DynamicVal, set: true, pos: pos}
	}
	l, ok := b.m[name].([]any)
	if !ok || len(l) == 0 {
		return nil, field{}
	}
	m, ok := l[0].(map[string]any)
	if !ok {
		return nil, field{}
	}
	var unk map[string]any
	if ul, ok := b.unk[name].([]any); ok && len(ul) > 0 {
		unk, _ = ul[0].(map[string]any)
	}
	p := b.path + "/" + name + "/0"
	return &planBody{m: m, unk: unk, idx: b.idx, path: p, pos: b.idx.atOr(p, pos)}, field{set: true, pos: pos, val: cty.EmptyObjectVal}
}

func (b *planBody) object(name string) (body, field) {
	f := b.attr(name)
	if !f.set || !f.val.IsWhollyKnown() || f.val.IsNull() || f.val.Type() != cty.String {
		return nil, f
	}
	if jb := decodeJSONObject(f.val.AsString(), f.pos); jb != nil {
		return jb, f
	}
	return nil, f
}

func (b *planBody) at() config.Position { return b.pos }

// jsonIndex maps the paths of a JSON document under resource_changes
// ("resource_changes/0/change/after/name") to where their key or element
// starts.
type jsonIndex struct {
	name  string
	lines []int  // offset of each line's start
	ascii []bool // whether each line is ASCII only (its columns are its bytes)
	data  []byte
	at0   map[string]int
}

// indexJSON walks data's tokens once, recording the offsets of keys and
// elements under resource_changes, and refuses nesting deeper than
// infra.MaxNestingDepth.
func indexJSON(name string, data []byte) (*jsonIndex, error) {
	x := &jsonIndex{name: name, data: data, at0: map[string]int{}, lines: []int{0}, ascii: []bool{true}}
	for i, c := range data {
		switch {
		case c == '\n':
			x.lines = append(x.lines, i+1)
			x.ascii = append(x.ascii, true)
		case c >= utf8.RuneSelf:
			x.ascii[len(x.ascii)-1] = false
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		path   string
		array  bool
		n      int
		key    bool // an object expecting a key next
		record bool
	}
	var stack []frame
	start := func() int {
		off := int(dec.InputOffset())
		for off < len(data) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
			off++
		}
		return off
	}
	// valuePath is the path of the value about to be read, and whether to
	// record it.
	var pending string
	pendingRecord := false
	for {
		off := start()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, infra.Errorf(x.position(off), "not JSON: %v", err)
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			if top.array {
				if d, ok := tok.(json.Delim); !ok || (d != ']') {
					pending = top.path + "/" + strconv.Itoa(top.n)
					pendingRecord = top.record
					top.n++
					if pendingRecord {
						x.at0[pending] = off
					}
				}
			} else if top.key {
				if s, ok := tok.(string); ok {
					pending = top.path + "/" + s
					pendingRecord = top.record || (len(stack) == 1 && s == "resource_changes")
					if pendingRecord {
						x.at0[pending] = off
					}
					top.key = false
					continue
				}
			} else {
				top.key = true
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) >= infra.MaxNestingDepth {
					return nil, infra.Errorf(x.position(off), "objects and arrays nest deeper than %d, the limit for an infrastructure file", infra.MaxNestingDepth)
				}
				stack = append(stack, frame{path: pending, array: d == '[', key: d == '{', record: pendingRecord})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if n := len(stack); n > 0 && !stack[n-1].array {
					stack[n-1].key = true
				}
			}
		}
	}
	return x, nil
}

// position returns the line and column (in runes) of offset off.
func (x *jsonIndex) position(off int) config.Position {
	off = min(max(off, 0), len(x.data))
	i := sort.Search(len(x.lines), func(i int) bool { return x.lines[i] > off }) - 1
	i = max(i, 0)
	col := 1 + off - x.lines[i]
	if !x.ascii[i] {
		col = 1 + utf8.RuneCount(x.data[x.lines[i]:off])
	}
	return config.Position{File: x.name, Line: i + 1, Column: col}
}

// at returns where path starts (line 1 column 1 when not recorded).
func (x *jsonIndex) at(path string) config.Position {
	return x.atOr(path, config.Position{File: x.name, Line: 1, Column: 1})
}

// atOr returns where path starts, or def.
func (x *jsonIndex) atOr(path string, def config.Position) config.Position {
	if off, ok := x.at0["/"+path]; ok {
		return x.position(off)
	}
	if off, ok := x.at0[path]; ok {
		return x.position(off)
	}
	return def
}

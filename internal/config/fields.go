package config

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// Kind is the shape of a field's value in the subscriptions file.
type Kind string

// The kinds of field.
const (
	// KindText is any scalar, read as text (null is "").
	KindText Kind = "text"
	// KindInteger is an integer within Field.Min..Field.Max.
	KindInteger Kind = "integer"
	// KindDuration is a Go duration string (300ms, 30s, 1m) or a bare 0,
	// within Field.Min..Field.Max.
	KindDuration Kind = "duration"
	// KindBoolean is true or false.
	KindBoolean Kind = "boolean"
	// KindEnum is one of Field.Enum, spelt as listed.
	KindEnum Kind = "enum"
	// KindMap is a mapping of names to scalar values.
	KindMap Kind = "map"
	// KindList is a list of scalar values.
	KindList Kind = "list"
	// KindBlock is a mapping with fields of its own (the fields whose
	// Block is this field's Path).
	KindBlock Kind = "block"
	// KindScript is a builtin handler script: "defer,defer,ack" or a list
	// of outcomes.
	KindScript Kind = "script"
)

// Field describes one field of the subscriptions file. The table of every
// field (Fields) is the one declaration the decoder reads its fields,
// defaults, ranges and enum values from; tests check the JSON Schema
// (Schema), docs/configuration.md and consume's mapping to the pump's
// options against it.
type Field struct {
	// Block is the YAML path of the mapping holding the field, with
	// "subscriptions[]" for any subscription: "" (the top level),
	// "connections.aws", "subscriptions[]", "subscriptions[].sqs",
	// "subscriptions[].handler.tls", ...
	Block string
	// Name is the field's YAML key, e.g. "bufferSize".
	Name string
	// Kind is the shape of its value.
	Kind Kind
	// Required reports that the file must set it.
	Required bool
	// Default is the value the field gets when the file does not set it,
	// as docs/configuration.md writes it ("1", "500ms", "proactor",
	// "name" for a default taken from another field); "" when there is
	// none (empty, zero or absent).
	Default string
	// Enum lists the valid values of a KindEnum field, in the schema's
	// order.
	Enum []string
	// Min and Max bound a KindInteger (decimal) or KindDuration (a Go
	// duration such as "12h") field, inclusive; "" is no bound.
	Min, Max string
	// Positive reports that a KindDuration field must be > 0s.
	Positive bool
	// HandlerTypes lists, for a field of the handler block, the handler
	// types that take it.
	HandlerTypes []HandlerType
	// GoField is the name of the Go struct field the value is stored in
	// (Subscription.BufferSize: "BufferSize"); "" for a field stored
	// elsewhere or not stored as such (a block).
	GoField string
	// PumpOption is the pump.Options field (internal/pump) that `brighter
	// consume` sets from this field; "" when none.
	PumpOption string
	// Doc says what the field means, in one line.
	Doc string
}

// Path returns the field's YAML path: Block and Name joined by a dot.
func (f Field) Path() string { return JoinPath(f.Block, f.Name) }

// Fields returns every field of the subscriptions file, block by block in
// the order of the file's documentation; a new slice on each call.
func Fields() []Field {
	var out []Field
	out = append(out, describe("", topTable)...)
	out = append(out, describe("connections", connectionsTable)...)
	out = append(out, describe("connections.aws", awsTable)...)
	out = append(out, describe("connections.gcp", gcpConnTable)...)
	out = append(out, describe("connections.rocketmq", rocketmqConnTable)...)
	out = append(out, describe("subscriptions[]", subscriptionTable)...)
	out = append(out, describe("subscriptions[].handler", handlerTable)...)
	out = append(out, describe("subscriptions[].handler.tls", tlsTable)...)
	out = append(out, describe("subscriptions[].sqs", sqsTable)...)
	out = append(out, describe("subscriptions[].sqs.redrivePolicy", redrivePolicyTable)...)
	out = append(out, describe("subscriptions[].gcp", gcpTable)...)
	out = append(out, describe("subscriptions[].gcp.deadLetterPolicy", deadLetterPolicyTable)...)
	out = append(out, describe("subscriptions[].rocketmq", rocketmqTable)...)
	out = append(out, describe("subscriptions[].memory", memoryTable)...)
	return out
}

// field binds one Field to the Go struct T that holds its value, with what
// the decoder needs to read it.
type field[T any] struct {
	Field
	// at returns a pointer to the value's Go field in t: *string (also
	// for a string-typed enum), *int, *time.Duration, *bool,
	// *map[string]string or *[]string. nil for a field the block's
	// decoder reads itself (KindBlock).
	at func(t *T) any
	// def is the typed default stored before the block is read (int,
	// time.Duration, string or bool); nil leaves the zero value.
	def any
	// lo and hi bound an integer (math.MinInt / math.MaxInt: no bound).
	lo, hi int
	// valid, when not "", is what an integer's out-of-range error says
	// its valid values are ("valid values are ..."), in place of lo..hi.
	valid string
	// dur bounds a duration.
	dur durRange
	// noun names the value in an enum's "unknown NOUN" error; default
	// Name.
	noun string
	// nonEmpty refuses a text value that is present and empty.
	nonEmpty bool
	// missing follows "required field is missing" in the error for an
	// absent Required field.
	missing string
	// after runs when the value was read without an error (a check or a
	// rewrite of the stored value, such as a path made relative to the
	// file).
	after func(d *decoder, e entry, t *T)
}

// names returns the YAML keys of a table, in order.
func names[T any](table []field[T]) []string {
	out := make([]string, len(table))
	for i, f := range table {
		out[i] = f.Name
	}
	return out
}

// lookup returns the table's field named key, or nil.
func lookup[T any](table []field[T], key string) *field[T] {
	for i := range table {
		if table[i].Name == key {
			return &table[i]
		}
	}
	return nil
}

// describe returns the exported descriptions of a table's fields: Block
// set, and Default, Min, Max and GoField derived from the binding unless
// the literal gave them.
func describe[T any](block string, table []field[T]) []Field {
	out := make([]Field, len(table))
	var zero T
	for i, f := range table {
		d := f.Field
		d.Block = block
		if d.Default == "" && f.def != nil {
			d.Default = formatValue(f.def)
		}
		switch d.Kind {
		case KindInteger:
			if f.lo != math.MinInt && d.Min == "" {
				d.Min = strconv.Itoa(f.lo)
			}
			if f.hi != math.MaxInt && d.Max == "" {
				d.Max = strconv.Itoa(f.hi)
			}
		case KindDuration:
			d.Min = FormatDuration(f.dur.min)
			if f.dur.max > 0 {
				d.Max = FormatDuration(f.dur.max)
			}
			d.Positive = f.dur.positive
		}
		if f.at != nil {
			d.GoField = goFieldName(&zero, f.at(&zero))
		}
		out[i] = d
	}
	return out
}

// formatValue writes a default as the documentation does.
func formatValue(v any) string {
	switch x := v.(type) {
	case time.Duration:
		return FormatDuration(x)
	default:
		return fmt.Sprint(x)
	}
}

// goFieldName returns the name of the field of *t that ptr points to, or
// "" when ptr points into none of them.
func goFieldName[T any](t *T, ptr any) string {
	sv := reflect.ValueOf(t).Elem()
	p := reflect.ValueOf(ptr).Pointer()
	for i := range sv.NumField() {
		if sv.Field(i).Addr().Pointer() == p {
			return sv.Type().Field(i).Name
		}
	}
	return ""
}

// setDefaults stores every field's default in t.
func setDefaults[T any](t *T, table []field[T]) {
	for _, f := range table {
		if f.def == nil || f.at == nil {
			continue
		}
		switch p := f.at(t).(type) {
		case *int:
			*p = f.def.(int)
		case *time.Duration:
			*p = f.def.(time.Duration)
		case *string:
			*p = f.def.(string)
		case *bool:
			*p = f.def.(bool)
		}
	}
}

// decodeFields reads every entry of ents that the table names into t, in
// the file's order; an entry of a field without a Go target (a KindBlock)
// is passed to block, when not nil, in its turn.
func decodeFields[T any](d *decoder, ents []entry, t *T, table []field[T], block func(e entry)) {
	for _, e := range ents {
		f := lookup(table, e.key)
		switch {
		case f == nil:
		case f.at != nil:
			f.read(d, e, t)
		case block != nil:
			block(e)
		}
	}
}

// read reads e into the field's Go target in t, reporting any problem; it
// reports whether the value was stored. It panics on a Go target of a type
// it does not read: a defect of a table, which
// TestFieldTable_KindsFitTheirGoFields finds, never an effect of input.
func (f *field[T]) read(d *decoder, e entry, t *T) bool {
	var ok bool
	switch p := f.at(t).(type) {
	case *string:
		if f.Kind == KindEnum {
			ok = d.enum(e, p, cmp.Or(f.noun, f.Name), f.Enum)
			break
		}
		ok = d.str(e, p)
		if ok && f.nonEmpty && *p == "" {
			d.errorf(e.val, e.path, "must not be empty")
			return false
		}
	case *int:
		ok = d.intIn(e, p, f.lo, f.hi, f.valid)
	case *time.Duration:
		ok = d.dur(e, p, f.dur)
	case *bool:
		ok = d.boolean(e, p)
	case *map[string]string:
		*p, ok = d.strMap(e), true
	case *[]string:
		if f.Kind == KindScript {
			*p, ok = d.script(e), true
			break
		}
		*p, ok = d.strList(e), true
	default:
		panic(fmt.Sprintf("config: field %s has a Go target of type %T", f.Name, p))
	}
	if ok && f.after != nil {
		f.after(d, e, t)
	}
	return ok
}

// missingAt reports the field absent, at p, under path.
func (f *field[T]) missingAt(d *decoder, p Position, path string) {
	d.errAt(p, path, "%s", "required field is missing"+f.missing)
}

// requireFields reports, in table order, every Required field of the table
// that got (the entries of block e) does not hold, at e's key and under
// e's path.
func requireFields[T any](d *decoder, table []field[T], got []entry, e entry) {
	for i := range table {
		f := &table[i]
		if f.Required && !slices.ContainsFunc(got, func(g entry) bool { return g.key == f.Name }) {
			f.missingAt(d, d.posOf(e.keyN), e.path+"."+f.Name)
		}
	}
}

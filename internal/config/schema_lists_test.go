package config

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestSchemaListsMatchDecoder: every field name and enum value the decoder
// knows (its field table) is the schema's, and no other, so the two cannot
// drift apart when a field or value is added to one of them; each field's
// kind, enum, bounds and requiredness are the schema's too
// (checkFieldsAgainstSchema).
func TestSchemaListsMatchDecoder(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	at := func(path ...string) any {
		var v any = doc
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("schema: %v: not an object at %q", path, p)
			}
			v = m[p]
		}
		return v
	}
	keys := func(path ...string) []string {
		m, _ := at(path...).(map[string]any)
		var out []string
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	enum := func(path ...string) []string {
		var out []string
		for _, v := range at(append(path, "enum")...).([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	same := func(what string, schema, decoder []string) {
		t.Helper()
		a, b := slices.Clone(schema), slices.Clone(decoder)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Errorf("%s: schema has %v, decoder has %v", what, a, b)
		}
	}
	same("top-level fields", keys("properties"), topFields)
	same("top-level extension fields", keys("patternProperties"), []string{"^" + extensionPrefix})
	same("connections fields", keys("properties", "connections", "properties"), connFields)
	same("connections.aws fields", keys("properties", "connections", "properties", "aws", "properties"), awsFields)
	same("connections.gcp fields", keys("properties", "connections", "properties", "gcp", "properties"), gcpConnFields)
	same("connections.rocketmq fields", keys("properties", "connections", "properties", "rocketmq", "properties"), rocketConnFlds)
	same("subscription fields", keys("$defs", "subscription", "properties"), subFields)
	for tr, fields := range blockFields {
		same(string(tr)+" block fields", keys("$defs", string(tr), "properties"), fields)
	}
	same("handler fields", keys("$defs", "handler", "properties"), allHandlerFields)
	same("tls fields", keys("$defs", "handler", "properties", "tls", "properties"), tlsFields)
	// The decoder reads its enums from the schema; the Go constants the
	// rest of brighter switches on must be exactly those values.
	same("transport", enum("$defs", "subscription", "properties", "transport"), []string{string(TransportSQS), string(TransportGCP), string(TransportRocketMQ), string(TransportMemory)})
	same("messagePumpType", enum("$defs", "subscription", "properties", "messagePumpType"), []string{string(Reactor), string(Proactor)})
	same("makeChannels", enum("$defs", "subscription", "properties", "makeChannels"), []string{string(MakeChannelsCreate), string(MakeChannelsValidate), string(MakeChannelsAssume)})
	same("handler type", enum("$defs", "handler", "properties", "type"), []string{string(HandlerBuiltin), string(HandlerExec), string(HandlerHTTP)})
	same("builtin outcomes", enum("$defs", "outcome"), []string{BuiltinLog, BuiltinAck, BuiltinDefer, BuiltinReject, BuiltinFail, BuiltinUnacceptable})
	same("sqs channelType", enum("$defs", "sqs", "properties", "channelType"), []string{ChannelPointToPoint, ChannelPubSub})
	same("sqs queueType", enum("$defs", "sqs", "properties", "queueType"), []string{QueueStandard, QueueFIFO})
	same("gcp mode", enum("$defs", "gcp", "properties", "mode"), []string{GCPModePull, GCPModeStream})
	for i, h := range []HandlerType{HandlerBuiltin, HandlerExec, HandlerHTTP} {
		names := at("$defs", "handler", "allOf").([]any)[i].(map[string]any)["then"].(map[string]any)["propertyNames"].(map[string]any)["enum"].([]any)
		var got []string
		for _, n := range names {
			got = append(got, n.(string))
		}
		same(string(h)+" handler fields", got, handlerFields[h])
	}
	checkFieldsAgainstSchema(t, doc)
}

// schemaBlocks is where the schema describes the properties of each block
// of the field table (Field.Block), as a path of keys from the root.
var schemaBlocks = map[string][]string{
	"":                                     {},
	"connections":                          {"properties", "connections"},
	"connections.aws":                      {"properties", "connections", "properties", "aws"},
	"connections.gcp":                      {"properties", "connections", "properties", "gcp"},
	"connections.rocketmq":                 {"properties", "connections", "properties", "rocketmq"},
	"subscriptions[]":                      {"$defs", "subscription"},
	"subscriptions[].handler":              {"$defs", "handler"},
	"subscriptions[].handler.tls":          {"$defs", "handler", "properties", "tls"},
	"subscriptions[].sqs":                  {"$defs", "sqs"},
	"subscriptions[].sqs.redrivePolicy":    {"$defs", "sqs", "properties", "redrivePolicy"},
	"subscriptions[].gcp":                  {"$defs", "gcp"},
	"subscriptions[].gcp.deadLetterPolicy": {"$defs", "gcp", "properties", "deadLetterPolicy"},
	"subscriptions[].rocketmq":             {"$defs", "rocketmq"},
	"subscriptions[].memory":               {"$defs", "memory"},
}

// checkFieldsAgainstSchema checks every field of Fields against its schema
// property: the property exists; a duration refers to #/$defs/duration with
// the same x-durationRange, a boolean to #/$defs/bool, a map to
// #/$defs/stringMap, a list is an array; an enum lists the same values; an
// integer has the same bounds (a const alternative counts as a bound, as
// Pub/Sub's maxDeliveryAttempts 0 does); Required matches the block's
// "required".
func checkFieldsAgainstSchema(t *testing.T, doc map[string]any) {
	t.Helper()
	obj := func(v any) map[string]any { m, _ := v.(map[string]any); return m }
	node := func(path []string) map[string]any {
		var v any = doc
		for _, p := range path {
			v = obj(v)[p]
		}
		return obj(v)
	}
	fields := Fields()
	if len(fields) < 80 {
		t.Fatalf("Fields() holds %d fields; the table is not all there", len(fields))
	}
	for _, f := range fields {
		bp, ok := schemaBlocks[f.Block]
		if !ok {
			t.Errorf("%s: block %q is not placed in schemaBlocks", f.Path(), f.Block)
			continue
		}
		block := node(bp)
		prop := obj(obj(block["properties"])[f.Name])
		if prop == nil {
			t.Errorf("%s: not in the schema", f.Path())
			continue
		}
		var required []string
		list, _ := block["required"].([]any)
		for _, r := range list {
			required = append(required, r.(string))
		}
		if slices.Contains(required, f.Name) != f.Required {
			t.Errorf("%s: Required is %v in the table; the schema's required is %v", f.Path(), f.Required, required)
		}
		ref, _ := prop["$ref"].(string)
		switch f.Kind {
		case KindDuration:
			if ref != "#/$defs/duration" {
				t.Errorf("%s: a duration in the table; the schema refers to %q", f.Path(), ref)
			}
			r := obj(prop["x-durationRange"])
			lo, _ := r["minimum"].(string)
			if f.Positive {
				lo, _ = r["exclusiveMinimum"].(string)
			}
			hi, _ := r["maximum"].(string)
			if !sameDuration(lo, f.Min) || !sameDuration(hi, f.Max) {
				t.Errorf("%s: the table bounds it %s..%s (positive %v); the schema's x-durationRange is %v", f.Path(), f.Min, f.Max, f.Positive, r)
			}
		case KindBoolean:
			if ref != "#/$defs/bool" {
				t.Errorf("%s: a boolean in the table; the schema refers to %q", f.Path(), ref)
			}
		case KindMap:
			if ref != "#/$defs/stringMap" {
				t.Errorf("%s: a map in the table; the schema refers to %q", f.Path(), ref)
			}
		case KindList:
			if types, _ := prop["type"].([]any); !slices.Contains(types, any("array")) {
				t.Errorf("%s: a list in the table; the schema's type is %v", f.Path(), prop["type"])
			}
		case KindEnum:
			values, _ := prop["enum"].([]any)
			if ref == "#/$defs/outcome" {
				values, _ = node([]string{"$defs", "outcome"})["enum"].([]any)
			}
			var got []string
			for _, v := range values {
				got = append(got, v.(string))
			}
			if !slices.Equal(got, f.Enum) {
				t.Errorf("%s: the table's values are %v; the schema's %v", f.Path(), f.Enum, got)
			}
		case KindInteger:
			lo, hi := math.Inf(1), math.Inf(-1)
			if ref == "#/$defs/int" {
				prop = node([]string{"$defs", "int"})
			}
			alts, _ := prop["anyOf"].([]any)
			for _, alt := range alts {
				a := obj(alt)
				if c, ok := a["const"].(float64); ok {
					lo, hi = min(lo, c), max(hi, c)
				}
				if a["type"] == "integer" {
					lo, hi = min(lo, a["minimum"].(float64)), max(hi, a["maximum"].(float64))
				}
			}
			wantLo, wantHi := float64(math.MinInt64), float64(math.MaxInt64)
			if f.Min != "" {
				wantLo = mustFloat(t, f.Min)
			}
			if f.Max != "" {
				wantHi = mustFloat(t, f.Max)
			}
			if lo != wantLo || hi != wantHi {
				t.Errorf("%s: the table bounds it %q..%q; the schema %v..%v", f.Path(), f.Min, f.Max, lo, hi)
			}
		}
	}
}

// sameDuration reports whether two Go durations ("" = none, as "0s" is
// for a minimum) are equal.
func sameDuration(a, b string) bool {
	parse := func(s string) time.Duration {
		if s == "" {
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			panic(fmt.Sprintf("not a duration: %q", s))
		}
		return d
	}
	return parse(a) == parse(b)
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("bound %q: %v", s, err)
	}
	return f
}

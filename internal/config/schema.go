package config

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// schema is the JSON Schema (draft 2020-12) of the subscriptions file.
//
//go:embed brighter.schema.json
var schema []byte

// Schema returns the JSON Schema (draft 2020-12) of the subscriptions file,
// for editors (yaml-language-server) and `brighter schema`. It describes the
// same file Parse accepts: TestSchemaAgreesWithDecoder checks both on every
// file of examples/ and testdata/.
//
// The decoder takes every enum's values from the schema (schemaEnum), so the
// two cannot list different values. Parse stays the authority: it also
// matches enum values regardless of case,
// and reports each problem at its file:line:column with the valid values and
// the closest name, which a schema validator cannot. The schema's own x-
// keywords (x-durationRange: a duration's bounds; x-uniqueKey: subscription
// names are unique) are for brighter's test; editors ignore them.
func Schema() []byte { return append([]byte(nil), schema...) }

// schemaEnum returns the values of the enum at path in the schema, in the
// schema's order (the order error messages list them in). The schema is
// compiled into the binary; a path that names no enum is a defect of this
// package, which panics when the package is initialised (and so fails
// every test of it), never on any input.
func schemaEnum(path ...string) []string {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		panic(fmt.Sprintf("config: the embedded schema is not JSON: %v", err))
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			panic(fmt.Sprintf("config: the embedded schema has no %v", path))
		}
		v = m[p]
	}
	m, _ := v.(map[string]any)
	list, ok := m["enum"].([]any)
	if !ok {
		panic(fmt.Sprintf("config: the embedded schema has no enum at %v", path))
	}
	out := make([]string, len(list))
	for i, x := range list {
		if out[i], ok = x.(string); !ok {
			panic(fmt.Sprintf("config: the embedded schema's enum at %v holds %v", path, x))
		}
	}
	return out
}

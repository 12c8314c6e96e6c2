package config

import _ "embed"

// schema is the JSON Schema (draft 2020-12) of the subscriptions file.
//
//go:embed brighter.schema.json
var schema []byte

// Schema returns the JSON Schema (draft 2020-12) of the subscriptions file,
// for editors (yaml-language-server) and `brighter schema`. It describes the
// same file Parse accepts: TestSchemaAgreesWithDecoder checks both on every
// file of examples/ and testdata/.
//
// Parse stays the authority: it also matches enum values regardless of case,
// and reports each problem at its file:line:column with the valid values and
// the closest name, which a schema validator cannot. The schema's own x-
// keywords (x-durationRange: a duration's bounds; x-uniqueKey: subscription
// names are unique) are for brighter's test; editors ignore them.
func Schema() []byte { return append([]byte(nil), schema...) }

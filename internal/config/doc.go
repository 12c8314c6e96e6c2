// Package config reads brighter's subscriptions file (brighter.yaml): the
// connections to each broker and the subscriptions that `brighter consume`,
// `brighter lint`, `brighter dlq` and `brighter watch` act on.
//
// The file is YAML, with Brighter's parameter names (requeueCount,
// requeueDelay, bufferSize, noOfPerformers, makeChannels, messagePumpType,
// deadLetterRoutingKey, ...) and one block per transport for its native
// settings (sqs, gcp, rocketmq, memory). Load and Parse apply Brighter's
// subscription defaults (docs/configuration.md lists them), expand ${VAR}
// and ${VAR:-default} in scalar values, and check every field. Every problem is an
// *Error naming file:line:column and the field's YAML path; all problems of a
// file are returned together as Errors, so `brighter lint` can report each as
// a finding and `brighter consume` can refuse to start before any broker call:
// bad input never stops a running consumer, and a bad config is a clear error
// before the first.
//
// What the file may legally say is this package's job; whether a legal value
// is wise (a zero budget, R-7; a budget outranked by a native redrive limit,
// R-10; a budget that cannot run down, R-11) is internal/lint's. The
// positions kept for every key (Subscription.Pos, File.Pos) let lint point at
// the line it judges.
//
// Every field is declared once, in its block's field table (Field; the
// tables are in connections.go, subscription.go, transports.go and
// handler.go): YAML name, kind, Go field, default, bounds or enum values,
// one line of documentation, and the pump option `brighter consume` sets
// from it. The decoder reads fields, defaults and bounds from the tables;
// Fields exports them, and tests hold the schema, docs/configuration.md,
// docs/handlers.md and consume's mapping to the pump to them.
//
// The YAML is parsed by go.yaml.in/yaml/v3 into its yaml.Node tree, and
// decoded by walking that tree, not by reflection, so that unknown fields,
// wrong types and ranges are reported with the position of the offending
// key or value and the valid names or values, and so that no input can make
// the decoder panic (FuzzParse). The walk reads the tree as the decoder
// read github.com/goccy/go-yaml's tree before (docs/adr/0008): scalars are
// typed by goccy/go-yaml's rules (YAML 1.2's core schema: yes is a string,
// 010 octal, 1e3 a string), columns count characters and no tab, a key
// written twice in a mapping is refused with goccy/go-yaml's syntax error,
// and a file yaml/v3 refuses is parsed by goccy/go-yaml, whose error is the
// one reported (TestParse_ReadsTheFileAsGoccyYAMLDid holds the decoder to
// goccy/go-yaml's answers). goccy/go-yaml's tree cost three times
// yaml/v3's to build, most of `brighter lint` of a large file. The walk
// resolves aliases and merge keys itself: neither library resolves them
// with positions kept, nor has an option to bound how much they expand;
// here each use is charged the nodes it brings in against a budget per
// file (MaxAliasNodes; an alias bomb ends with an error at the use that
// spent it). A key written over a merge key is kept at its own line, a
// merged one at the anchored mapping's, marked as merged
// (Subscription.Merged; errors and lint findings about it end with
// MergedNote): each points at the line to edit. Top-level keys starting
// with x- are extension fields, read by nothing, which hold anchors as in
// a Docker Compose file. The other limits of a file (size, tokens, one value, depth)
// are in limits.go; the infrastructure files of lint --infra are read
// with goccy/go-yaml under the same limits (ParseLimited).
//
// The JSON Schema of the file (Schema, `brighter schema`) is embedded here;
// the decoder takes every enum's values from it, and the range and
// cross-field checks stay in the decoder, where each problem keeps its
// file:line:column and the closest valid name (a schema validator reports
// JSON pointers, not YAML positions).
//
// The CLI, lint, the handler adapters and the transports depend on it, never
// the reverse.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/broker/limits, internal/redact
package config

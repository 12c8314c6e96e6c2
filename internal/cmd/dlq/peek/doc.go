// Package peek is `brighter dlq peek`: the dead-lettered messages of a
// destination, with their rejection metadata, as a table or JSON lines,
// removing nothing.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package peek

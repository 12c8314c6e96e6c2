// Package restore is `brighter dlq restore`: the records of an archive
// published back to a dead-letter destination, refused when it already
// holds a selected id.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package restore

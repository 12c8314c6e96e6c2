// Package purge is `brighter dlq purge`: the selected dead letters deleted
// for good, an archive to nowhere (shared.ArchiveOptions.RunArchive).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package purge

// Package archive is `brighter dlq archive`: the selected dead letters
// moved into a JSON-lines file, each removed only once it is on disk (the
// run, shared.ArchiveOptions.RunArchive, is dlq purge's too).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package archive

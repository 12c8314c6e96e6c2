// Package replay is `brighter dlq replay`: the selected dead letters sent
// back where they came from (or --to), each removed only after its copy
// was accepted; its run is shared.ReplayOptions.Run, which dlq edit and
// the triage console share.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package replay

// Package stats is `brighter dlq stats`: a destination's dead letters
// counted by reason, original topic and rejection message (the failure
// groups --group-id names), removing nothing.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package stats

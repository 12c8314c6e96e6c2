// Package triage is `brighter dlq triage`: the interactive console
// (internal/tui/triage) over one dead-letter destination, its actions
// wired to inspect's scan, replay, archive and restore and to dlq edit's
// edit session.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package triage

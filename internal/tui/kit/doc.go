// Package kit is what the two terminal screens share: the dashboard of
// `brighter watch` and `brighter consume --tui` (internal/tui) and the
// console of `brighter dlq triage` (internal/tui/triage). It holds one set
// of text styles in three palettes (styles.go), key bindings that carry
// the texts of the one-line key bar and of the help screen (keys.go), the
// full-screen view (screen.go) and the line helpers (text.go): cut a cell
// or a line to a width with "…", fit a body to a height, keep the cursor's
// row in view, wrap a status line, collapse white space, and show text
// from a message or a handler with its control characters escaped
// (Visible, which the dlq commands' tables use too).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
//
// Imported by: internal/tui, internal/tui/triage, internal/inspect,
// internal/cmd/dlq/restore
package kit

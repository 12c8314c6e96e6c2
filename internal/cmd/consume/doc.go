// Package consume is `brighter consume`: it opens a channel per selected
// subscription through the transport registry, runs the message pump
// (internal/pump) over each, with the observers (logs, metrics, /events,
// OpenTelemetry, the --tui dashboard) attached, refuses to start what
// `brighter lint` reports as an error, and ends on a stop request through
// Supervisor: the first SIGINT, SIGTERM or q drains, a second exits at
// once (exit 1).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package consume

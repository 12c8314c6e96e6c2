// Package observe turns the pump's events into things an operator can watch
// (ARCHITECTURE.md, "A message's path through the pump"):
//
//   - Metrics: a pump.Observer that counts events into Prometheus metrics on a
//     registry of its own (one per consume run, never the global default).
//   - Health: /healthz (the process serves) and /readyz (every channel is
//     open and the consumer is not draining).
//   - Stream: a pump.Observer that fans events out to live readers (the
//     /events endpoint and the in-process dashboard) through bounded buffers;
//     a slow or absent reader never slows the pump, and what it misses is
//     counted in brighter_events_dropped_total.
//   - Server: one HTTP listener serving /metrics, /healthz, /readyz and
//     /events.
//   - ReadEvents and ReadTotals: the client side of /events and /metrics,
//     used by `brighter watch`.
//
// The wire format of /events is Record, one JSON object per line (NDJSON), or
// Server-Sent Events when the client asks for text/event-stream; see
// docs/performance.md "Events and dashboard".
//
// Every Observe method here is called on the pump's goroutines: it never
// blocks, never does I/O and never allocates more than one small record.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...,
// internal/tui/..., cmd/...
package observe

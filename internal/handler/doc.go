// Package handler holds brighter's handler adapters: the ways `brighter
// consume` hands a message to the user's code. Each adapter returns a
// pump.Handler:
//
//   - Builtin and Script: fixed outcomes (log, ack, defer, reject, fail,
//     unacceptable) and scripted sequences of them keyed by the presented
//     delivery count, for demos, tests and budget drills.
//   - Exec: runs a command per message (never through a shell), the body on
//     stdin and the header in BRIGHTER_* environment variables; the exit code
//     selects the outcome.
//   - HTTP: POSTs the body with CloudEvents HTTP binary-mode headers and the
//     Brighter headers; the status code, or an optional JSON reply, selects
//     the outcome.
//
// Every adapter is stateless per message, so any number of replicas may run
// it against one subscription (ARCHITECTURE.md#scale). W3C trace context
// (traceparent, tracestate, baggage) travels from the message to the HTTP
// request's headers and the command's environment.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...,
// cmd/..., internal/tui/...
package handler

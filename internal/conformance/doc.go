// Package conformance is the behaviour x configuration x variant suite of the
// delivery-count contract and rejection routing (requirements Groups A-D,
// R-27(c)), run against every transport's emulator or test broker in both
// pump variants, and the ledger it writes to docs/conformance.md.
//
// A transport takes part by providing a Fixture (one per configuration, such
// as SqsStandard or PullOrdering); the behaviours in behaviours.go are written
// once and run over every fixture. The harness offers the dispatch counter
// keyed by original message id and the recording consumer of R-27(c).
//
// Its tests run it over the transports; nothing but tests uses it.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...
//
// Imported by: none
package conformance

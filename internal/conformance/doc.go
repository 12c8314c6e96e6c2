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
// It may import internal/pump, internal/broker and internal/message (and, in
// its tests, the transports); nothing but tests imports it.
package conformance

// Package memory is an in-process transport for the pump's unit tests, for the
// CLI tests, and for running a handler against captured messages locally
// (seeded from the JSON-lines shape `brighter dlq peek --output json` prints).
//
// Its delivery counter follows the contract of requirements Group A exactly:
// each receive of a stored message increments its delivery attempt, a requeue
// or a lapsed visibility timeout makes it visible again without rewriting it,
// and the presented count is broker.PresentedCount(stamped, attempt,
// routedCopy). Hooks make publish, release, acknowledge and receive fail on
// demand so every failure path of the pump and the Router can be exercised.
//
// It is never a stand-in for a real broker's semantics: transport behaviour is
// tested against each transport's emulator.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/broker, internal/message
//
// Must not import: internal/pump
package memory

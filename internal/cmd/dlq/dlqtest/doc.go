// Package dlqtest is the test support the tests of the dlq verbs
// (internal/cmd/dlq/...) share: the allow-list cases of every transport,
// the dead-letter queues and brokers the SIGKILL tests kill replays,
// archives and edits on, subscriptions files, `brighter dlq` as a process
// (a peek holding a dead letter, for the signal tests), SQS's queue counts,
// and the shared dead-letter topic on Pub/Sub. It is for tests only.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package dlqtest

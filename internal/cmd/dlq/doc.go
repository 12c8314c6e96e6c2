// Package dlq is `brighter dlq`, the parent of its verbs (peek, stats,
// replay, archive, purge, restore, edit, triage): the dead-lettered
// messages of a subscription, or of a destination named by URL. Each verb
// is a package of its own under internal/cmd/dlq (as gh lays out
// `gh pr create`), what they share is internal/cmd/dlq/shared, and the
// test support their tests share is internal/cmd/dlq/dlqtest.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package dlq

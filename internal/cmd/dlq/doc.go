// Package dlq is `brighter dlq` and its subcommands (peek, stats, replay,
// archive, purge, restore, edit, triage): the dead-lettered messages of a
// subscription, or of a destination named by URL, read through the
// transport registry (internal/transport) and the inspection engine
// (internal/inspect), with the flags every subcommand shares, --group-id
// completion, the replay's allow-list, fan-out guard and journal, and the
// interruption contract (SIGINT or SIGTERM releases what was read and
// exits 130).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package dlq

// Package shared is what the dlq verbs share: the flags every verb has
// (Options) and the destination they name, resolved through the transport
// registry (internal/transport) and read through the inspection engine
// (internal/inspect); --group-id completion; the replay run of dlq
// replay, dlq edit and the triage console (ReplayOptions: --to, the
// allow-list, the fan-out and shared-dead-letter guard, the journal, the
// confirmation); the archive run of dlq archive and purge
// (ArchiveOptions) and the archive file's checks; dlq edit's edit session;
// and the interruption contract (SIGINT or SIGTERM releases what was read
// and exits 130).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package shared

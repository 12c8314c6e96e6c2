// Package edit is `brighter dlq edit`: one dead-lettered message edited
// (in $EDITOR, or with --body-file and --set) and the edited copy replayed
// through dlq replay's run.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package edit

// Package triage is the model of `brighter dlq triage`: an
// interactive console over one dead-letter destination. It shows the
// failure groups (count, oldest, newest, reason, a sample rejection
// message), the messages of a group, and one message (headers, bag,
// rejection metadata, body pretty-printed by content type), and lets the
// operator select messages, replay the selection or a group, edit one
// message and replay it, archive, browse the archive file and restore
// from it, toggle a dry run, search every message, sort, read again (on a
// clock, --refresh, and on ctrl+r) and quit.
// Every destructive action shows its destinations and count and asks once
// (y/n); progress is shown while it runs.
//
// The model never touches a broker: what it does is injected as Actions
// (internal/cmd/dlq wires internal/inspect into them), so it is tested with
// plain Update calls.
//
// The files: actions.go is what the console does (Actions, confirmations,
// actions run in the background), state.go what it shows (the failure
// groups, the filter, the sort, the selection), model.go the Model and its
// Update, keys.go its keys, declared once (they handle the keys and render
// the key bar and the help screen), archived.go the archived view and
// its restore; view.go lays the screen out around one
// file a view: view_groups.go, view_messages.go, view_message.go. Styles,
// key bindings and line helpers come from internal/tui/kit, shared with the
// dashboard.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/..., cmd/...
package triage

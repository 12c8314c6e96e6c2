// Package tui is the terminal dashboard of `brighter watch` and
// `brighter consume --tui`: subscriptions with their rates,
// outcomes, budget R, native limit M, effective limit and DLQ depth;
// messages in flight and recently settled, each with its delivery count drawn
// against its budget; and a log of rejections with reason and route.
//
// Each subscription has a status line (connected, or failing since when
// with the last error, from the channel-failure, stalled and
// channel-recovered records), the last Warn/Error log lines
// (KindLog records, from observe.LogTee) are in a panel at the bottom, and
// with Options.Interrupt (consume --tui) q drains the consumer and the
// screen says "draining (N in flight)..." until the program is ended.
// Before that, while consume --tui still opens its channels
// (ConnectingMsg until ConnectedMsg), the screen says for how long, which
// subscription and which transport and endpoint, and q gives the
// connection up.
//
// Model is a bubbletea (charm.land/bubbletea/v2) model fed with EventsMsg
// batches of observe.Record, TotalsMsg from /metrics and TargetStatusMsg.
// Batcher turns a stream of records into at most one EventsMsg per interval
// (100ms: the dashboard redraws at most 10 times a second however fast
// events arrive); Watch reads /events and /metrics of remote consumers and
// keeps retrying an unreachable target.
//
// The files: state.go is what the dashboard knows (the state the feed, the
// scrapes and the targets' reports fold into; the views only read it);
// model.go the Model around it (Update, pause), keys.go its keys, declared
// once, filter.go what the filter and the sort show; view.go lays the
// screen out from one file a panel: view_header.go (title, targets,
// connecting, draining), view_subscriptions.go (with their status lines),
// view_messages.go, view_rejections.go, view_details.go, view_log.go and
// view_help.go (the help screen and the key line). Styles, key bindings and
// line helpers come from internal/tui/kit, shared with internal/tui/triage.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/..., cmd/...
package tui

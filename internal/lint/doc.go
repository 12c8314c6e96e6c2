// Package lint judges a parsed subscriptions file (internal/config) for
// settings that are legal but will probably not behave as their author
// meant, and writes the findings as text, JSON, SARIF 2.1.0 or GitHub
// workflow-command annotations. It is the engine of `brighter lint` and of
// the start-up check of `brighter consume` (R-25, NFR-4: each finding logged
// once per subscription and rule, never per message).
//
// The budget rules are R-7 (zero or negative requeueCount), R-10 (a budget
// outranked by a native redrive limit), R-11 (a budget that cannot run down)
// and R-17 (a budget with nowhere to send an exhausted message); two more
// judge deliveries the broker counts without a handler run:
// restarts-spend-budget (stops and kills of the consumer, restarts.go) and
// ordering-spends-budget (hold-backs on an ordered channel). Rules lists
// every rule with its stable id, severity and explanation.
//
// What is transport-specific (a native redrive limit, whether the delivery
// count can advance, the lease a message is held for, a transport's own
// ranges) is not decided here: each transport answers through the
// TransportRules interface, and the caller passes one implementation per
// transport (see internal/lint/rules). What stays here is naming and
// resolution a new transport must also learn: how a channel name resolves
// for the cross-subscription rules (readKey and destKey, pairs.go), what a
// transport's channels and native limit are called in messages
// (transportNoun, names.go; nativeLimitField, lint.go), and the memory
// transport's exemptions from the rules of Linter.appendSubscription, whose
// messages end with the process.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...,
// internal/pump, github.com/spf13/cobra
package lint

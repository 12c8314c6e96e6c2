// Package inspect is the logic behind `brighter dlq`: it reads a dead-letter,
// invalid-message or native redrive destination through the transport's
// ORDINARY consumer (so the delivery count shown is the one the rejecting
// consumer stamped: R-28, AC-41), filters what it finds, renders it (a
// lipgloss table on a terminal, message.Record JSON lines otherwise),
// summarises it (Stats) and puts chosen messages back (Replay) without ever
// removing one before its copy was published (R-5, R-9, AC-4).
//
// Every operation is a Scan: receive a batch, hand each message to a
// visitor, keep what the visitor did not remove invisible (held) until the
// scan ends, then release it at once (Requeue 0: SQS ChangeMessageVisibility
// 0, Pub/Sub ModifyAckDeadline 0, RocketMQ ChangeInvisibleDuration 0). Only
// a receipt and an identity key are kept per message, so memory stays flat
// however many messages the destination holds.
//
// The commands wire a transport's consumer and producer into it.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/pump, internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...,
// cmd/...
package inspect

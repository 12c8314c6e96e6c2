// Package broker defines what a transport is to the rest of brighter: the
// Consumer, Producer and ChannelMaker interfaces, the delivery-count rule every
// transport applies (requirements Group A, R-28), and the ONE rejection-routing
// implementation (Router) that every transport's Reject delegates to
// (R-15..R-19).
//
// Transports live in sub-packages (sqs, gcp, rocketmq, memory).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/pump, internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...
package broker

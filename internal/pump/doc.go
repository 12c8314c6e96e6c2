// Package pump is brighter's message pump: receive, dispatch to a Handler,
// settle. It enforces the redelivery budget (requeueCount, R-4..R-7), applies
// the requeue delay, rejects unacceptable messages and stops at
// unacceptableMessageLimit, backs off on channel failures and empty polls,
// and drains gracefully. It comes in Brighter's two variants (reference §8):
//
//   - Reactor: noOfPerformers goroutines, each receiving a batch and handling
//     its messages one at a time, in order.
//   - Proactor: noOfPerformers receivers fill bounded lanes; noOfPerformers
//     workers dispatch concurrently; messages with the same partition key go
//     to the same lane, so per-key order holds; acknowledgements are settled
//     asynchronously, in batches where the consumer offers
//     broker.BatchAcknowledger.
//
// Every event is reported to Observers. The pump sees a transport only as a
// broker.Consumer; cmd/brighter joins the two.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...,
// internal/handler, cmd/..., github.com/spf13/cobra
package pump

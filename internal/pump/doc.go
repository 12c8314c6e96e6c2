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
// Every event is reported to Observers. The pump imports internal/broker and
// internal/message only; it never imports a transport, a handler adapter or
// the CLI.
package pump

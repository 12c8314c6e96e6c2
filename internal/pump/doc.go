// Package pump is brighter's message pump: receive, dispatch to a Handler,
// settle. It enforces the redelivery budget (requeueCount, R-4..R-7), applies
// the requeue delay, rejects unacceptable messages, stops after
// unacceptableMessageLimit rejections of any kind (as .NET Brighter counts
// them), backs off on channel failures and empty polls,
// and drains gracefully. It comes in Brighter's two variants (docs/wire-format.md#pump):
//
//   - Reactor: noOfPerformers goroutines, each receiving a batch and handling
//     its messages one at a time, in order; acknowledgements go to the same
//     settle batcher as the Proactor's where the consumer offers
//     broker.BatchAcknowledger.
//   - Proactor: noOfPerformers receivers fill bounded lanes; noOfPerformers
//     workers dispatch concurrently; messages with the same partition key go
//     to the same lane, so per-key order holds; acknowledgements are settled
//     asynchronously, in batches where the consumer offers
//     broker.BatchAcknowledger.
//
// Every event is reported to Observers. The pump sees a transport only as a
// broker.Consumer; the consume command (internal/cmd/consume) joins the two.
//
// Files, one job each:
//
//   - options.go: Variant, the defaults, Options and their normalisation.
//   - run.go: Pump, New and Run; the run type and its stop and drain
//     (halt, mayStart, stopping), receive, release and keep of messages a
//     stop gives back, the settle calls' shared deadline (call, callAt)
//     and the monotonic clock of a message's path (clock).
//   - reactor.go: the Reactor's performers.
//   - proactor.go: the Proactor's receivers, lanes and workers, and its
//     receive-ahead slots (receiveSlots).
//   - settler.go: both variants' settle batching: one batcher gathers
//     acknowledgements (ackItem) into batches of up to the consumer's
//     AckBatchMax (ten on SQS) within a window
//     bounded by the lease (ackBound); a full batch is sent by the
//     performer that filled it, one due on its bound by one of
//     NoOfPerformers senders (ADR 0004 item 9).
//   - settle.go: handle and dispatch, and the settles: acknowledge,
//     requeue (the redelivery budget), reject, rejectHandled, acknowledged;
//     countUnacceptable, ErrCutOff, ErrUnacceptableLimit.
//   - exhausted.go: a delivery judged before its handler runs (the budget
//     spent) and its routing.
//   - handledhere.go: the record of messages handled in this process.
//   - ackretry.go: a delivery of a message whose handler acknowledged it
//     here and whose acknowledgement failed, acknowledged without a
//     handler run (retryAck).
//   - lease.go: lease tracking of held messages (leases, leaseRef, lapse
//     checks, end).
//   - lease_schedule.go: the lease extension schedule (half-lease and
//     economical) and the extension calls (leases.run, extendDue).
//   - redelivery.go: later deliveries of a message the run still holds,
//     and settles sent with a lapsed receipt (stale).
//   - order.go: per-partition-key hold-back under deferral, and what a
//     settle left of a message (settleEnd, unsettled).
//   - health.go: channel health, back-off and stall reporting.
//   - observer.go: Event, Observer and the log observer.
//   - handler.go: Handler, Outcome and Result.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...,
// internal/handler, cmd/..., github.com/spf13/cobra
package pump

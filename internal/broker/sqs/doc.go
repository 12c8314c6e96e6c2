// Package sqs is brighter's AWS transport: SQS queues, read directly or
// subscribed to SNS topics (SqsStandard, SqsFifo, SnsStandard, SnsFifo), on
// github.com/aws/aws-sdk-go-v2.
//
// What it promises:
//
//   - Wire format (codec.go, encode.go, decode.go): Brighter's SQS/SNS
//     format both ways (docs/wire-format.md#sqs): the attribute names
//     (including "souce", sic), the bag JSON carrying handled-count as a
//     string, cloudeventheaders, RFC 3339 ms timestamps,
//     FIFO MessageGroupId from the partition key and MessageDeduplicationId
//     from the bag, at most 10 attributes (ErrTooManyAttributes before AWS
//     would refuse), Brighter's queue and topic naming (QueueName,
//     TopicName). It reads raw delivery and the SNS JSON envelope
//     (rawMessageDelivery: false), and in envelope mode reads the handled
//     count from the bag (Brighter's envelope reader always reads 0; that
//     defect is not copied). A message from a producer that is not Brighter
//     gets its id from the SQS MessageId and type MT_EVENT. A message that
//     cannot be decoded is presented as MT_UNACCEPTABLE with its receipt so
//     the pump routes it: never dropped, never a crash.
//   - Delivery count (count.go, requirements Group A, docs/adr/0001): the
//     stamped count plus ApproximateReceiveCount minus one, which SQS returns
//     with every receive (no extra call, NFR-1; no extra allocation, NFR-2);
//     a routed copy presents its stamped count only.
//   - Requeue is one ChangeMessageVisibility to the delay (0 = at once,
//     capped at 12 h); the stored message is never rewritten (NFR-3).
//   - Reject goes through broker.Router: SendMessage of the stamped copy to
//     the dead-letter or invalid-message queue, then DeleteMessage; on a
//     failed send the original is released with ChangeMessageVisibility to
//     the Router's growing delay (broker.RoutingFailureDelay: 1 s doubling
//     with each delivery attempt, at most 10 min; the longest at once for a
//     send SQS refuses as it is) and an Error log. The receipt
//     handle lives in message.Message.Receipt, never in the bag, so a routed
//     copy never carries it.
//   - Receive asks for bufferSize (1..10) messages and long-polls for the
//     pump's timeOut (at most 20 s); both pump variants acknowledge with
//     DeleteMessageBatch through the pump's settle batcher
//     (broker.BatchAcknowledger).
//   - Lease start: SQS starts a message's visibility timeout when
//     ReceiveMessage hands it out, which ends the long poll; the pump's
//     lease clock starts when the receive returns (docs/adr/0005-leases.md,
//     "where each lease clock starts"). This package keeps no clock of its
//     own.
//   - Calls (calls.go): with Connection.Calls, SDK middleware after the
//     retry step counts every SQS and SNS request sent, a batch as one call
//     and each retry again (brighter_broker_calls_total).
//   - makeChannels (channels.go): create / validate / assume for the queue,
//     its native redrive queue, the SNS topic and subscription, and the
//     dead-letter and invalid-message queues.
//
// Emulator caveats (fauxqs 1.9.2, the emulator the tests run; see
// docs/emulators.md): it accepts more than 10 attributes (hence the
// client-side guard, tested without the emulator); a message moved by
// native redrive keeps counting ApproximateReceiveCount and has no
// DeadLetterQueueSourceArn; a FIFO ReceiveMessage returns at most one
// message per group; it treats RawMessageDelivery as raw only for the exact
// string "true" (this package writes "true"/"false"); stale or malformed
// receipt handles are accepted silently by DeleteMessage; queue URLs name a
// host Go cannot resolve, so the SDK's endpoint must always be set.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/pump, internal/broker/gcp/...,
// internal/broker/rocketmq/..., internal/broker/memory/...
package sqs

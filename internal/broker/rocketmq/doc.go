// Package rocketmq is brighter's RocketMQ 5 transport, on the official Go
// client github.com/apache/rocketmq-clients/golang/v5 (v5.1.2): a Consumer on
// a SimpleConsumer, a Producer, and makeChannels (Channels), in Brighter's
// RocketMQ wire format (codec.go, docs/wire-format.md#rocketmq) so .NET
// Brighter and brighter read each other's messages.
//
// What it promises (ADR 0003):
//
//   - Delivery count (R-1..R-3, R-28): HandledCount stamped in the stored
//     message + MessageView.DeliveryAttempt - 1, read at no extra call;
//     a routed copy (carrying rejection metadata) presents its stamped count
//     (count.go, DeliveryCount). RocketMQ's attempt is exact per consumer
//     group.
//   - Requeue: one ChangeInvisibleDuration to the requeue delay; the broker
//     redelivers with DeliveryAttempt + 1.
//   - Reject: broker.Router, sending the routed copy to the dead-letter or
//     invalid-message topic with the Producer, then Ack; a failed send
//     releases the original with ChangeInvisibleDuration to the Router's
//     growing delay (broker.RoutingFailureDelay: 1 s doubling with each
//     delivery attempt, at most 10 min; the longest at once for a send the
//     broker refuses as it is) and logs an Error; no destination acks with
//     a Warning.
//   - Ack: the client reports success even when the broker refuses the
//     receipt handle (docs/emulators.md#rmqtest-rocketmq-5). The consumer refuses to ack a
//     message whose invisible duration it knows has lapsed (ErrLeaseExpired);
//     a refusal it cannot see leaves the message to be redelivered after its
//     invisible duration, which at-least-once delivery tolerates.
//   - Calls: with Connection.Calls, each ReceiveMessage, AckMessage,
//     ChangeInvisibleDuration and SendMessage is counted around the client's
//     call (brighter_broker_calls_total): the client dials its connections
//     itself, with options no caller can extend, so no gRPC interceptor can
//     see them; its own QueryRoute, Heartbeat and Telemetry are not counted.
//   - Lease start: the broker starts a message's invisible duration when it
//     pops the message for a ReceiveMessage, any time in a long poll of up
//     to AwaitDuration. The consumer's receipt deadline (which refuses an
//     extension or an acknowledgement it knows comes too late) and the
//     pump's lease clock (the consumer is a broker.LeaseFromReceiveStart)
//     both start at the ReceiveMessage's start, the earliest the broker's
//     can, so neither ends after the broker's
//     (docs/adr/0005-leases.md, "where each lease clock starts"). Keep the
//     invisible duration well over AwaitDuration: a message popped near the
//     end of a poll starts with that much less of it by their count.
//   - Native dead-lettering: the broker moves a message that used up its
//     consumer group's maximum delivery attempts to %DLQ%<group>, with no
//     rejection metadata; when that maximum is below requeueCount it wins.
//   - The client's own log goes to DefaultClientLogDir, not /logs and never
//     the user's terminal (ConfigureClientLog).
//
// Caveats: makeChannels create does nothing (topics are made by the broker's
// operator); the pump's receive timeout is not used (the long-polling wait is
// AwaitDuration, fixed when the consumer is made); the client always dials
// TLS without verifying the certificate. Tests run against rmqtest, an
// in-process broker serving the real gRPC protocol; its differences from a
// real broker are listed in its package comment, and
// compose/docker-compose-rocketmq.yaml runs a real one.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/pump, internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/memory/...
package rocketmq

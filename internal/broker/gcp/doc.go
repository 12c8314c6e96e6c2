// Package gcp is brighter's Google Cloud Pub/Sub transport, built on
// cloud.google.com/go/pubsub/v2.
//
// It has the shape every transport has:
//
//   - codec.go: Brighter's Pub/Sub wire format both ways (reference §3):
//     PascalCase and ce- attributes, the bag flattened to attributes,
//     ordering_key from the partition key. Pure functions, fuzzed.
//   - count.go: the delivery-count rule (R-1..R-3, R-28, AC-33): the stamped
//     HandledCount attribute plus delivery_attempt minus one. Pub/Sub fills
//     delivery_attempt only on a subscription with a DeadLetterPolicy; without
//     one the count never advances and a budget (requeueCount != -1) cannot
//     run down, which EnsureChannels reports once with a Warning.
//   - consumer.go: PullConsumer (unary Pull of up to bufferSize messages,
//     never extends a deadline) and StreamConsumer (streaming pull, flow
//     control bufferSize x noOfPerformers, configurable MaxExtension). Both
//     reject through broker.Router (R-15..R-19): publish the stamped copy to
//     the destination topic, then acknowledge; on a failed publish release at
//     once (pull: ModifyAckDeadline 0, stream: Nack).
//   - producer.go: Producer, publishing in the wire format with ordering keys.
//   - channels.go: Channels, makeChannels create/validate/assume for the
//     topic, subscription, native DeadLetterPolicy, the rejection topics and
//     the two IAM bindings of R-20 with its exact status filter.
//
// PUBSUB_EMULATOR_HOST is honoured by the client library itself (no
// credentials are looked up when it is set); Connect only passes options on.
//
// The tests run on Google's own Pub/Sub emulator (gcptest, issue 15;
// local-brokers.md §2b), each in its own project. Its differences from the
// service that this package meets: it refuses labels in an UpdateSubscription
// mask (ensureSubscription updates only differing fields and retries without
// labels), it has no IAM service (GetIamPolicy is Unimplemented, tolerated by
// R-20), and it fills delivery_attempt on a subscription with only a
// RetryPolicy, where the service's documentation says only a
// DeadLetterPolicy does (R-11 follows the documentation; ADR 0002). The
// demo's in-process pstest (internal/demo) has further gaps (local-brokers.md
// §2.4); an update is never sent without a mask, which would crash it.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/pump, internal/broker/sqs/...,
// internal/broker/rocketmq/..., internal/broker/memory/...,
// github.com/spf13/cobra
package gcp

// Package gcp is brighter's Google Cloud Pub/Sub transport, built on
// cloud.google.com/go/pubsub/v2.
//
// It has the shape every transport has:
//
//   - codec.go: Brighter's Pub/Sub wire format both ways (docs/wire-format.md#pubsub):
//     PascalCase and ce- attributes, the bag flattened to attributes,
//     ordering_key from the partition key. Pure functions, fuzzed.
//   - count.go: the delivery-count rule (R-1..R-3, R-28, AC-33): the stamped
//     HandledCount attribute plus delivery_attempt minus one. Pub/Sub fills
//     delivery_attempt only on a subscription with a DeadLetterPolicy; without
//     one the count never advances and a budget (requeueCount != -1) cannot
//     run down, which EnsureChannels reports once with a Warning.
//   - pull.go: PullConsumer, unary Pull of up to bufferSize messages; the
//     pump keeps a held message's ack deadline through ExtendLeases
//     (ModifyAckDeadline, lease.go; a broker.LeaseExtender).
//   - stream.go: StreamConsumer, streaming pull, flow control bufferSize x
//     noOfPerformers; the client extends its messages' leases itself, up to
//     a configurable MaxExtension (a broker.ClientLeaser).
//   - consumer.go: what the two share. Both reject through broker.Router
//     (R-15..R-19): publish the stamped copy to the destination topic, then
//     acknowledge; on a failed publish release the original with the
//     Router's growing delay (broker.RoutingFailureDelay: 1 s doubling with
//     each delivery attempt, at most 600 s, Pub/Sub's longest ack deadline;
//     the longest at once for a publish Pub/Sub refuses as it is), as a
//     Requeue does it (pull: ModifyAckDeadline to the delay; stream: the
//     message held for the delay, then Nack).
//   - Requeue delay: both consumers hold a deferred message for its delay
//     themselves (pull: ModifyAckDeadline to the delay; stream: the lease
//     kept, then Nack), at most 600 s, so it never comes back sooner. A
//     subscription's RetryPolicy (makeChannels create gives it one when
//     requeueDelay > 0: minimum requeueDelay, maximum maxRequeueDelay) is
//     applied by Pub/Sub on the Nack or the lapsed deadline, after the
//     hold: a gap between deliveries is the delay plus a back-off growing
//     towards maxRequeueDelay (measured on Google's emulator;
//     docs/commands/consume.md#pubsub-redelivery-gaps).
//   - Lease start: Pub/Sub starts a pulled message's ack deadline when the
//     service hands it to the Pull, which answers with it then; the pump's
//     lease clock starts when the Pull returns. A
//     stream's messages are tracked from the client's receipt (DeliveredAt)
//     (docs/adr/0005-leases.md, "where each lease clock starts"). This
//     package keeps no clock of its own for a pull.
//   - Readiness on an idle subscription: an empty receive counts as an
//     answered broker call, so both consumers make sure the service did
//     answer before they report one. The service and Google's emulator
//     answer an idle Pull by themselves before its deadline (the emulator
//     about 1 s before it, measured; the service, by the client libraries'
//     reports, with an empty response, a DeadlineExceeded status of its own
//     or not before the deadline), which costs nothing extra. A
//     Pull cut off by its own deadline (timeOut + PullGrace) with no answer
//     is followed by one probe, a GetSubscription within ProbeTimeout (5 s)
//     and no retry: any answer of the service, a refusal included, makes the
//     receive empty; no answer makes it a channel failure, so the pump's
//     stall clock runs from the Pull's start and readiness turns 503 within
//     the documented bound (a black-holed receive ends within timeOut + 7 s,
//     inside the pump's timeOut + 10 s). Cost: at most one GetSubscription
//     per Pull cut off, none on the emulator; on a service that holds idle
//     Pulls to their deadline, one per idle Pull (an administrator
//     operation under its own quota; a quota refusal is an answer too). An
//     open stream says nothing while idle, so the stream consumer probes
//     the same way once a Receive finds no message and no answered probe
//     for StreamProbeAfter (5 s): one GetSubscription per 5 s of silence
//     per idle streaming subscription, none while messages flow;
//     concurrent Receives share the probe. Its readiness bound is the
//     pull's plus StreamProbeAfter.
//   - producer.go: Producer, publishing in the wire format with ordering keys.
//   - calls.go: CountCalls, gRPC interceptors that count every call the
//     client sends (brighter_broker_calls_total): a unary RPC attempt is one
//     call, a StreamingPull stream one receive when it opens.
//   - channels.go: Channels, makeChannels create/validate/assume for the
//     topic, subscription, native DeadLetterPolicy, the rejection topics and
//     the two IAM bindings of R-20.
//   - iam.go: those IAM bindings (ensureBinding), R-20's exact status filter
//     (toleratedIAM), the Warning of an abandoned binding and its skip on
//     Google's emulator (skipOnEmulator).
//
// PUBSUB_EMULATOR_HOST is honoured by the client library itself (no
// credentials are looked up when it is set); Connect only passes options on.
//
// The tests run on Google's own Pub/Sub emulator (gcptest;
// docs/emulators.md#googles-pubsub-emulator), each in its own project. Its
// differences from the service that this package meets: it refuses labels in
// an UpdateSubscription mask (ensureSubscription updates only differing fields
// and retries without labels), it has no IAM service (GetIamPolicy is
// Unimplemented, tolerated by R-20), it fills delivery_attempt on a
// subscription with only a RetryPolicy, where the service's documentation says
// only a DeadLetterPolicy does (R-11 follows the documentation; ADR 0002), and
// it redelivers a message the first time with no RetryPolicy back-off, where
// the documentation gives the minimum back-off to every redelivery. The
// demo's in-process pstest (internal/demo) has further gaps
// (docs/emulators.md#pstest-in-process); an update is never sent without a
// mask, which would crash it.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/pump, internal/broker/sqs/...,
// internal/broker/rocketmq/..., internal/broker/memory/...,
// github.com/spf13/cobra
package gcp

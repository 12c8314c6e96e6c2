// Package rmqtest is an in-process RocketMQ 5 broker for tests: it serves the
// real apache.rocketmq.v2.MessagingService (the generated server interfaces
// shipped in github.com/apache/rocketmq-clients/golang/v5/protocol/v2) over
// TLS with a self-signed certificate generated at Start, so the real Go
// client v5.1.2 talks to it unchanged (ADR 0003). No RocketMQ
// broker can be installed on the machines this project is built on; this
// package is what the RocketMQ transport, its conformance rows and the CLI's
// RocketMQ testscripts run against. (brighter demo runs on an embedded
// Pub/Sub emulator only; it has no RocketMQ variant.)
//
// # What it implements (RocketMQ 5's documented semantics)
//
//   - QueryRoute: one route entry per queue of an existing topic, pointing
//     back at this server, accepting NORMAL, FIFO and DELAY messages;
//     TOPIC_NOT_FOUND for a topic that does not exist (unless
//     Options.AutoCreateTopics).
//   - Telemetry: reads the client's Settings until the stream ends, records
//     each consumer group's long-polling timeout and, as a real proxy does,
//     answers a consumer's Settings with them plus the group's retry policy
//     (backoff_policy.max_attempts: the group's maximum delivery attempts,
//     SetMaxDeliveryAttempts; HideGroupRetryPolicy turns the answer off).
//     Heartbeat answers OK.
//   - SendMessage: stores each message on its topic, in a queue chosen by
//     hashing the message group (FIFO) or round robin; a delivery timestamp
//     holds the message back until then. It echoes the client's message id.
//   - ReceiveMessage: per consumer group (every group reads the whole topic,
//     as a RocketMQ consumer group does), delivers up to batch_size visible
//     messages of the requested queue that match the TAG filter, each made
//     invisible for the request's invisible_duration, with
//     system_properties.delivery_attempt increased by one per delivery and a
//     new receipt handle. Messages of one message group are delivered in
//     order, one at a time: the next is held back while an earlier one is in
//     flight or not yet acknowledged. With nothing to deliver it long-polls
//     for the group's long-polling timeout, then answers MESSAGE_NOT_FOUND.
//   - AckMessage: accepts only the current, unexpired receipt handle;
//     otherwise INVALID_RECEIPT_HANDLE (which the Go client swallows,
//     ADR 0003, decision 7).
//   - ChangeInvisibleDuration: with the current handle, makes the message
//     invisible for the new duration (0 = visible at once) and returns a new
//     handle; the old handle is stale. The next delivery's attempt is one
//     more, as after a lapse.
//   - Native dead-lettering: when a message that has already been delivered
//     MaxDeliveryAttempts times becomes visible again, it is moved, unchanged
//     (same message id, properties and body, no metadata), to the topic
//     %DLQ%<group>, which springs into being; it is never delivered to that
//     group again.
//   - Faults: FailSend, FailAck and FailChangeInvisibleDuration make those
//     RPCs answer a non-OK status on demand.
//
// # Differences from a real broker (read before trusting a green test)
//
//   - Storage is memory only; nothing survives Close. There is one broker
//     (no name server, no proxy/broker split, no replicas); every route entry
//     names this server.
//   - Namespaces, access keys and signatures are accepted and ignored: no
//     authentication or authorisation.
//   - A new consumer group reads a topic from its first message; a real broker
//     may start a new group at the latest offset.
//   - Only TAG filters ("*", "a || b"); SQL92 filters answer
//     ILLEGAL_FILTER_EXPRESSION. Topics have no message-type restriction
//     (a real 5.x topic accepts only the type it was created with).
//   - Message groups are always delivered in order one at a time, whatever
//     the consumer group's "FIFO" flag (a real broker orders only for a
//     consumer group created as orderly).
//   - MaxDeliveryAttempts counts deliveries: with N, a message is delivered at
//     most N times. A real broker's maxReconsumeTimes (default 16) counts
//     retries, so it may deliver N+1 times; the AC-23 measurement against a
//     real broker (compose/docker-compose-rocketmq.yaml) settles which.
//   - Dead-lettering happens on the receive path or within 50 ms of the
//     lapse (a sweeper); a real broker's retry topic adds a backoff between
//     attempts (1 s, 5 s, 10 s, ... for concurrent groups) that this broker
//     does not: a lapsed message is visible again at once.
//   - ChangeInvisibleDuration accepts any non-negative duration, 0 included;
//     a real proxy validates a minimum invisible time for receives and may
//     for this call too. Receive accepts any invisible duration > 0.
//   - Telemetry answers consumers' Settings only (a real proxy also answers a
//     producer's, with its publishing limits), and server-initiated
//     commands (thread stack traces, message verification, orphaned
//     transactions) are never sent. Transactions, QueryAssignment,
//     ForwardMessageToDeadLetterQueue and NotifyClientTermination are
//     unimplemented. Body digests are CRC32 only; bodies are never
//     compressed.
//   - No limits: body size, property count, batch size and queue depth are
//     unbounded.
//
// # Files, by protocol area
//
//   - server.go: Options, the Server type, Start and Close, call counts.
//   - store.go: topics, their queues and the message store; consumer
//     groups and their per-message delivery state; what a test reads back
//     (Messages, Pending).
//   - route.go: QueryRoute, Heartbeat and Telemetry (the group's
//     long-polling timeout and retry policy).
//   - send.go: SendMessage.
//   - receive.go: ReceiveMessage: long polls, TAG filters, invisible
//     durations, delivery attempts and message-group order.
//   - ack.go: receipt handles, AckMessage and ChangeInvisibleDuration.
//   - deadletter.go: the maximum delivery attempts and native dead-lettering to
//     %DLQ%<group>, on receive and by the sweeper.
//   - faults.go: Fault, StatusError and the FailSend ... FailQueryRoute
//     switches.
//   - hold.go: held calls (HoldCalls) and the advertised port
//     (AdvertisePort), for a fault proxy in front.
//   - cert.go: the self-signed TLS certificate made at Start.
//
// Besides internal/faultproxy (its black hole) it depends only on the
// generated protocol package, gRPC and the standard library.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/faultproxy
//
// Imported by: internal/cmd/dlq/dlqtest
package rmqtest

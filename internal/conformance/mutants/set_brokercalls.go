package main

// brokerCallsMutants break brighter_broker_calls_total, the billed broker
// calls counted on the wire: a batch acknowledgement left out, an
// acknowledgement counted under the wrong kind, a stream that opens
// uncounted, a RocketMQ acknowledgement left out, and consume not wiring
// the counter into its transports. Each is killed by consume's test that
// compares /metrics with what the wire saw.
var brokerCallsMutants = []mutant{
	{Name: "calls-sqs-batch-delete-uncounted", What: "a DeleteMessageBatch is not counted: the Proactor's acknowledgements vanish from brighter_broker_calls_total",
		File: "internal/broker/sqs/calls.go",
		Old:  "\t\t\t\tcalls.CountCall(broker.Call{Transport: TransportName, Channel: channel, Kind: callKind(op), Operation: op})\n",
		New:  "\t\t\t\tif op != \"DeleteMessageBatch\" {\n\t\t\t\t\tcalls.CountCall(broker.Call{Transport: TransportName, Channel: channel, Kind: callKind(op), Operation: op})\n\t\t\t\t}\n",
		Pkg:  "./internal/cmd/consume", Run: "^TestConsumeCountsBrokerCallsAsTheWireSeesThem$/^sqs$/^proactor$"},
	{Name: "calls-sqs-retry-counted-once", What: "the SQS call counter runs before the SDK's retry step: a call the service answered 500 and the SDK retried is counted once, the wire saw two",
		File: "internal/broker/sqs/calls.go",
		Old:  "\t\t\t}), middleware.After)\n",
		New:  "\t\t\t}), middleware.Before)\n",
		Pkg:  "./internal/broker/sqs", Run: "^TestCountCalls_EachAttemptAndEachBatchAsTheWireSeesThem$"},
	{Name: "calls-gcp-ack-kind-other", What: "a Pub/Sub Acknowledge is counted under kind other, not ack: calls per acknowledged message read zero",
		File: "internal/broker/gcp/calls.go",
		Old:  "\t\"Acknowledge\":       broker.CallAck,\n",
		New:  "\t\"Acknowledge\":       broker.CallOther,\n",
		Pkg:  "./internal/cmd/consume", Run: "^TestConsumeCountsBrokerCallsAsTheWireSeesThem$/^gcp-pull$/^reactor$"},
	{Name: "calls-gcp-stream-open-uncounted", What: "the opening of a StreamingPull stream is not counted as a receive call",
		File: "internal/broker/gcp/calls.go",
		Old:  "\t\ts.calls.CountCall(broker.Call{Transport: TransportName, Channel: s.channel, Kind: rpcKind(s.op), Operation: s.op})\n",
		New:  "\n",
		Pkg:  "./internal/cmd/consume", Run: "^TestConsumeCountsBrokerCallsAsTheWireSeesThem$/^gcp-stream$/^proactor$"},
	{Name: "calls-rocketmq-ack-uncounted", What: "a RocketMQ AckMessage is not counted",
		File: "internal/broker/rocketmq/consumer.go",
		Old:  "\tc.opts.count(c.opts.Topic, broker.CallAck, \"AckMessage\")\n",
		New:  "\n",
		Pkg:  "./internal/cmd/consume", Run: "^TestConsumeCountsBrokerCallsAsTheWireSeesThem$/^rocketmq$/^reactor$"},
	{Name: "calls-consume-not-wired", What: "consume --listen does not give its transports the counter: no brighter_broker_calls_total series at all",
		File: "internal/cmd/consume/consume.go",
		Old:  "\t\to.transports.CountCalls(obs.metrics)\n",
		New:  "\n",
		Pkg:  "./internal/cmd/consume", Run: "^TestConsumeCountsBrokerCallsAsTheWireSeesThem$/^sqs$/^reactor$"},
}

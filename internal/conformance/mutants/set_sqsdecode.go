package main

// sqsDecodeMutants break what keeps the SQS consumer's receive, decode and
// start-up cheap without changing what it reads: the system attributes a
// receive asks for, the flat-JSON fast path of cloudeventheaders and the
// bag, and the queue URL makeChannels hands the consumer.
var sqsDecodeMutants = []mutant{
	{Name: "sqs-receive-no-sent-timestamp", What: "a receive no longer asks for SentTimestamp: a message that names no time is stamped with the time it was decoded, not the time it was sent",
		File: "internal/broker/sqs/consumer.go",
		Old:  "\ttypes.MessageSystemAttributeNameSentTimestamp,\n",
		New:  "",
		Pkg:  "./internal/broker/sqs", Run: "^TestReceiveAsksForTheSystemAttributesDecodeReads$"},
	{Name: "flat-json-takes-escapes", What: "the flat-JSON fast path reads a string with a backslash as it stands: an escaped cloudeventheaders or bag value keeps its escape instead of the character encoding/json gives",
		File: "internal/message/flatjson.go",
		Old:  "return !strings.Contains(raw, `\\`) && utf8.ValidString(raw)",
		New:  "return (strings.Contains(raw, `\\`) || true) && utf8.ValidString(raw)",
		Pkg:  "./internal/message", Run: "^(TestScanFlatStringsTakesBrightersShapesOnly|FuzzScanFlatStringsAgreesWithEncodingJSON)$"},
	{Name: "flat-json-takes-invalid-utf8", What: "the flat-JSON fast path passes invalid UTF-8 through: a value encoding/json would read with U+FFFD keeps the raw bytes",
		File: "internal/message/flatjson.go",
		Old:  "return !strings.Contains(raw, `\\`) && utf8.ValidString(raw)",
		New:  "return !strings.Contains(raw, `\\`) && (utf8.ValidString(raw) || true)",
		Pkg:  "./internal/message", Run: "^(TestScanFlatStringsTakesBrightersShapesOnly|FuzzScanFlatStringsAgreesWithEncodingJSON)$"},
	{Name: "sqs-consumer-given-url-ignored", What: "the SQS consumer ignores the queue URL it was given and looks the queue up again: a second GetQueueUrl at every start-up",
		File: "internal/broker/sqs/consumer.go",
		Old:  "\t\tk.urls.m[k.name] = opts.QueueURL\n",
		New:  "",
		Pkg:  "./internal/broker/sqs", Run: "^TestConsumerGivenQueueURLLooksNothingUp$"},
	{Name: "sqs-open-url-not-passed", What: "consume's SQS channel does not hand the consumer the URL makeChannels validate looked up: the queue is looked up twice before the first receive",
		File: "internal/transport/sqs.go",
		Old:  "QueueURL: made.QueueURL,",
		New:  "QueueURL: made.QueueName[:0],",
		Pkg:  "./internal/cmd/consume", Run: "^TestConsumeLooksItsSQSQueueUpOnceAtStartUp$"},
}

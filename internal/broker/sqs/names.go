package sqs

import "strings"

// fifoSuffix ends every FIFO queue's and topic's name.
const fifoSuffix = ".fifo"

// QueueName turns a routing key or channel name into an SQS queue name the
// way Brighter does (docs/wire-format.md#sqs-names): every '.' becomes '_', and a
// FIFO name gets ".fifo" (a name already ending in "fifo" first loses its
// last five characters, so "orders.fifo" stays "orders.fifo"). The result
// is never shorter than name and never cut to SQS's 80 characters: a name
// over the limit reaches SQS whole, which refuses it, instead of naming
// another queue (the one whose name is its first 80 characters). The
// commands refuse such a name before any call with
// config.SQSQueueNameRule.
func QueueName(name string, fifo bool) string { return awsName(name, fifo) }

// TopicName is QueueName for SNS topics (whose limit, 256 characters, is
// config.SNSTopicNameRule's): the same name, never cut.
func TopicName(name string, fifo bool) string { return awsName(name, fifo) }

func awsName(name string, fifo bool) string {
	n := strings.ReplaceAll(name, ".", "_")
	if !fifo {
		return n
	}
	if strings.HasSuffix(n, "fifo") && len(n) >= len(fifoSuffix) {
		n = n[:len(n)-len(fifoSuffix)]
	}
	return n + fifoSuffix
}

package sqs

import "strings"

// Brighter's name limits (docs/wire-format.md#sqs-names).
const (
	maxQueueName = 80
	maxTopicName = 256
	fifoSuffix   = ".fifo"
)

// QueueName turns a routing key or channel name into an SQS queue name the
// way Brighter does (docs/wire-format.md#sqs-names): every '.' becomes '_', a FIFO name
// gets ".fifo" (a name already ending in "fifo" first loses its last five
// characters, so "orders.fifo" stays "orders.fifo"), and the result is at
// most 80 characters.
func QueueName(name string, fifo bool) string { return awsName(name, fifo, maxQueueName) }

// TopicName is QueueName for SNS topics: at most 256 characters.
func TopicName(name string, fifo bool) string { return awsName(name, fifo, maxTopicName) }

func awsName(name string, fifo bool, limit int) string {
	n := strings.ReplaceAll(name, ".", "_")
	if !fifo {
		return truncate(n, limit)
	}
	if strings.HasSuffix(n, "fifo") && len(n) >= len(fifoSuffix) {
		n = n[:len(n)-len(fifoSuffix)]
	}
	return truncate(n, limit-len(fifoSuffix)) + fifoSuffix
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

package broker

import "strings"

// CallKind classifies a broker call by what it does to messages, for the
// billed-calls metric (brighter_broker_calls_total's kind label). The set
// is fixed.
type CallKind string

// The kinds of broker call.
const (
	// CallReceive fetches messages: SQS ReceiveMessage, Pub/Sub Pull and the
	// opening of a StreamingPull stream, RocketMQ ReceiveMessage.
	CallReceive CallKind = "receive"
	// CallAck removes messages: SQS DeleteMessage and DeleteMessageBatch,
	// Pub/Sub Acknowledge (and acknowledgements carried on a StreamingPull
	// stream), RocketMQ AckMessage.
	CallAck CallKind = "ack"
	// CallVisibility changes how long messages stay hidden (a lease
	// extension, or a requeue with a delay): SQS ChangeMessageVisibility and
	// its batch, Pub/Sub ModifyAckDeadline (and deadline changes carried on a
	// stream), RocketMQ ChangeInvisibleDuration.
	CallVisibility CallKind = "visibility"
	// CallPublish sends messages: SQS SendMessage and SendMessageBatch, SNS
	// Publish and PublishBatch, Pub/Sub Publish, RocketMQ SendMessage.
	CallPublish CallKind = "publish"
	// CallOther is every other call (queue and subscription look-ups and
	// attributes, channel making).
	CallOther CallKind = "other"
)

// Call is one broker call as sent on the wire: a batch operation is one
// call, and each retry of a call is another.
type Call struct {
	// Transport is the transport's name in the subscriptions file ("sqs",
	// "gcp", "rocketmq").
	Transport string
	// Channel is the queue, topic or subscription the call addresses (its
	// short name: the last element of a queue URL, topic ARN or resource
	// name), "" when the call names none.
	Channel string
	// Kind is what the call does.
	Kind CallKind
	// Operation is the API's own name of the call (ReceiveMessage,
	// DeleteMessageBatch, ModifyAckDeadline, ...), one of a fixed set per
	// transport.
	Operation string
}

// CallCounter counts broker calls. Transports given one call CountCall once
// per call they send; it must be safe for concurrent use and cheap (it runs
// on every broker call).
type CallCounter interface {
	CountCall(c Call)
}

// ShortName is the last element of a queue URL, an ARN or a resource name
// (projects/P/subscriptions/S): the part a subscriptions file names. A name
// with no separator is returned as it is.
func ShortName(name string) string {
	if i := strings.LastIndexAny(name, "/:"); i >= 0 {
		return name[i+1:]
	}
	return name
}

package sqs

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
)

// sendSize is the size SQS counts of a SendMessage request, in bytes: the
// body plus each message attribute's name, data type and value ("Amazon
// SQS message quotas"; the same count SendMessageBatch's 1 MiB request
// limit uses).
func sendSize(in *sqs.SendMessageInput) int {
	return len(aws.ToString(in.MessageBody)) + attrSize(in.MessageAttributes,
		func(v types.MessageAttributeValue) *string { return v.DataType }, func(v types.MessageAttributeValue) *string { return v.StringValue })
}

// checkLimits reports whether the SendMessage request in, of the message
// with id id, is within SQS's
// limits (limits.SQS): attribute names of at most 256 bytes, and body plus
// attributes (names, data types, values) of at most 1 MiB, SQS's maximum
// message size. fauxqs enforces neither as AWS does, so brighter checks them
// itself before every SendMessage and SendMessageBatch entry.
// The error names the message, its size and the limit, and wraps
// broker.ErrTooLarge: the producer refuses the message, and a routed copy
// is tried once with its rejection message shortened, then the original
// stays on its source queue, released with the longest delay and logged at
// Error. A queue whose own MaximumMessageSize is below 1 MiB is left
// to SQS to enforce (docs/adr/0005-leases.md, decision 10). nil when in
// fits.
func checkLimits(id string, in *sqs.SendMessageInput) error {
	l := limits.SQS
	for k := range in.MessageAttributes {
		if len(k) > l.MaxAttributeKeyBytes {
			return fmt.Errorf("%w: message %s: attribute name %.40q... is %d bytes, over SQS's %d", broker.ErrTooLarge, id, k, len(k), l.MaxAttributeKeyBytes)
		}
	}
	if size := sendSize(in); size > l.MaxMessageBytes {
		return fmt.Errorf("%w: message %s is %d bytes (body %d, attributes %d), over SQS's %d-byte maximum message size",
			broker.ErrTooLarge, id, size, len(aws.ToString(in.MessageBody)), size-len(aws.ToString(in.MessageBody)), l.MaxMessageBytes)
	}
	return nil
}

// publishSize is the size SNS counts of a Publish request, in bytes: the
// message, its subject, and each message attribute's name, data type and
// value (the same count PublishBatch's 256 KiB request limit uses).
func publishSize(in *sns.PublishInput) int {
	return len(aws.ToString(in.Message)) + len(aws.ToString(in.Subject)) + attrSize(in.MessageAttributes,
		func(v snstypes.MessageAttributeValue) *string { return v.DataType }, func(v snstypes.MessageAttributeValue) *string { return v.StringValue })
}

// checkSNSLimits is checkLimits for the SNS Publish request in of the
// message with id id (limits.SNS): attribute names of at most 256 bytes and
// at most ten attributes, and message, subject and attributes of at most
// 256 KiB together, SNS's maximum. fauxqs enforces none of them, so
// brighter checks them before every Publish and PublishBatch entry.
// The error names the message, its size and the limit, and wraps
// broker.ErrTooLarge: the producer refuses the message before any call.
// nil when in fits.
func checkSNSLimits(id string, in *sns.PublishInput) error {
	l := limits.SNS
	if n := len(in.MessageAttributes); n > l.MaxAttributes {
		return fmt.Errorf("%w: message %s has %d message attributes, over SNS's %d", broker.ErrTooLarge, id, n, l.MaxAttributes)
	}
	for k := range in.MessageAttributes {
		if len(k) > l.MaxAttributeKeyBytes {
			return fmt.Errorf("%w: message %s: attribute name %.40q... is %d bytes, over SNS's %d", broker.ErrTooLarge, id, k, len(k), l.MaxAttributeKeyBytes)
		}
	}
	if size := publishSize(in); size > l.MaxMessageBytes {
		return fmt.Errorf("%w: message %s is %d bytes (message %d, subject and attributes %d), over SNS's %d-byte maximum message size",
			broker.ErrTooLarge, id, size, len(aws.ToString(in.Message)), size-len(aws.ToString(in.Message)), l.MaxMessageBytes)
	}
	return nil
}

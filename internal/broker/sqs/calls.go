package sqs

import (
	"context"
	"reflect"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"

	"github.com/brightergo/brighter/internal/broker"
)

// TransportName is the transport's name in the subscriptions file, the
// transport label of the calls it counts.
const TransportName = "sqs"

// sqsCallKinds maps the SQS and SNS operations that move messages to their
// kind; every other operation is broker.CallOther. A batch operation is one
// call, whatever its number of entries.
var sqsCallKinds = map[string]broker.CallKind{
	"ReceiveMessage":               broker.CallReceive,
	"DeleteMessage":                broker.CallAck,
	"DeleteMessageBatch":           broker.CallAck,
	"ChangeMessageVisibility":      broker.CallVisibility,
	"ChangeMessageVisibilityBatch": broker.CallVisibility,
	"SendMessage":                  broker.CallPublish,
	"SendMessageBatch":             broker.CallPublish,
	"Publish":                      broker.CallPublish,
	"PublishBatch":                 broker.CallPublish,
}

// callKind is the kind of the SQS or SNS operation op.
func callKind(op string) broker.CallKind {
	if k, ok := sqsCallKinds[op]; ok {
		return k
	}
	return broker.CallOther
}

// callChannelKey is the stack value key of the channel a call addresses.
type callChannelKey struct{}

// channelFields are the input fields that name a call's channel, in the
// order they are looked for.
var channelFields = []string{"QueueUrl", "TopicArn", "QueueName", "Name"}

// callChannel is the short name of the queue or topic an operation's input
// addresses (its QueueUrl, TopicArn, QueueName or Name field), "" when it
// has none.
func callChannel(params any) string {
	v := reflect.ValueOf(params)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return ""
	}
	v = v.Elem()
	for _, name := range channelFields {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.String {
			continue
		}
		return broker.ShortName(f.Elem().String())
	}
	return ""
}

// countCalls returns SDK middleware that counts every attempt of an
// operation sent to the service into calls, by operation name: an
// Initialize step notes the channel the input addresses, and a Finalize
// step placed after the retry middleware counts each attempt (a retried
// call is billed again).
func countCalls(calls broker.CallCounter) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("BrighterCallChannel",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				ctx = middleware.WithStackValue(ctx, callChannelKey{}, callChannel(in.Parameters))
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
		if err != nil {
			return err
		}
		return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("BrighterCallCount",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				op := awsmiddleware.GetOperationName(ctx)
				channel, _ := middleware.GetStackValue(ctx, callChannelKey{}).(string)
				calls.CountCall(broker.Call{Transport: TransportName, Channel: channel, Kind: callKind(op), Operation: op})
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	}
}

package sqs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
)

// DefaultCallDeadline bounds one SQS or SNS operation, every retry of it
// included, when the caller's context has no deadline of its own (dlq, send,
// lint --live, channel making; the pump always sets one, from its timeOut or
// callTimeout, and that one stands). A ReceiveMessage gets its long-poll
// wait on top. Issue 13: without it, a host that accepts connections and
// never answers held a GetQueueUrl for three attempts of
// ResponseHeaderTimeout, 90 s, before the operator heard anything.
const DefaultCallDeadline = 15 * time.Second

// callDeadline returns SDK middleware (an Initialize step, so outside the
// retry loop) that gives an operation without a deadline
// DefaultCallDeadline. When that deadline cuts the operation off, the error
// names the service's endpoint (where, for errors) and the deadline.
func callDeadline(where string) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("BrighterCallDeadline",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if _, ok := ctx.Deadline(); ok {
					return next.HandleInitialize(ctx, in)
				}
				d := DefaultCallDeadline
				if r, ok := in.Parameters.(*sqs.ReceiveMessageInput); ok {
					d += time.Duration(r.WaitTimeSeconds) * time.Second
				}
				cctx, cancel := context.WithTimeout(ctx, d)
				defer cancel()
				out, md, err := next.HandleInitialize(cctx, in)
				if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
					err = fmt.Errorf("%s did not answer within %s: %w", where, d, err)
				}
				return out, md, err
			}), middleware.Before)
	}
}

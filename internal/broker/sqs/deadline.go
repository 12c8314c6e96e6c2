package sqs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/brightergo/brighter/internal/broker"
)

// authErrorCodes are the error codes of SQS and SNS (and the AWS
// authentication layer in front of them) for credentials or permissions
// the service refused: no retry cures them.
var authErrorCodes = map[string]bool{
	"ExpiredToken": true, "ExpiredTokenException": true, "RequestExpired": true,
	"InvalidClientTokenId": true, "UnrecognizedClientException": true, "InvalidAccessKeyId": true,
	"SignatureDoesNotMatch": true, "IncompleteSignature": true, "MissingAuthenticationToken": true,
	"InvalidSecurity": true, "AccessDenied": true, "AccessDeniedException": true, "AuthorizationError": true,
}

// authError reports whether err is the service refusing the credentials.
func authError(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && authErrorCodes[strings.TrimPrefix(api.ErrorCode(), "AWS.SimpleQueueService.")]
}

// DefaultCallDeadline bounds one SQS or SNS operation, every retry of it
// included, when the caller's context has no deadline of its own (dlq, send,
// channel making; the pump always sets one, from its timeOut or
// callTimeout, and that one stands; lint --live's clients have a shorter
// Connection.CallDeadline). A ReceiveMessage gets its long-poll
// wait on top. Without it, a host that accepts connections and
// never answers would hold a GetQueueUrl for three attempts of
// ResponseHeaderTimeout, 90 s, before the operator hears anything.
const DefaultCallDeadline = 15 * time.Second

// callDeadline returns SDK middleware (an Initialize step, so outside the
// retry loop) that gives an operation without a deadline
// DefaultCallDeadline. limit, when more than 0, is the deadline of every
// operation instead, also under a caller's deadline that is later (the
// caller's earlier one stands). When the step's deadline cuts the
// operation off, the error names the service's endpoint (where, for
// errors) and the deadline.
//
// A connection the endpoint refused (nothing listens there) is named the
// same way, "... refused the connection", so that the endpoint and its
// source are in the one line the operator reads.
//
// The same step names a refused credential (authErrorCodes): the error
// wraps broker.ErrNotAuthorized and names the endpoint and the credential
// source (source(), "" when not known), so that one line tells an operator
// what was refused by whom.
func callDeadline(where string, source func() string, limit time.Duration) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("BrighterCallDeadline",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				refused := func(err error) error {
					if err == nil || !authError(err) {
						return err
					}
					if src := source(); src != "" {
						return fmt.Errorf("%s %w from %s: %w", where, broker.ErrNotAuthorized, src, err)
					}
					return fmt.Errorf("%s %w: %w", where, broker.ErrNotAuthorized, err)
				}
				connRefused := func(err error) error {
					if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
						return err
					}
					return fmt.Errorf("%s refused the connection: %w", where, err)
				}
				d := DefaultCallDeadline
				if limit > 0 {
					d = limit
				}
				if dl, ok := ctx.Deadline(); ok && (limit <= 0 || time.Until(dl) <= limit) {
					out, md, err := next.HandleInitialize(ctx, in)
					return out, md, connRefused(refused(err))
				}
				if r, ok := in.Parameters.(*sqs.ReceiveMessageInput); ok {
					d += time.Duration(r.WaitTimeSeconds) * time.Second
				}
				cctx, cancel := context.WithTimeout(ctx, d)
				defer cancel()
				out, md, err := next.HandleInitialize(cctx, in)
				if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
					err = fmt.Errorf("%s did not answer within %s: %w", where, d, err)
				}
				return out, md, connRefused(refused(err))
			}), middleware.Before)
	}
}

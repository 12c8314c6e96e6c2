package sqs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/message"
)

// Limits of the consumer's broker calls.
const (
	// MaxBufferSize is SQS's MaxNumberOfMessages limit (and Brighter's
	// bufferSize limit).
	MaxBufferSize = 10
	// MaxWait is SQS's longest long poll (WaitTimeSeconds 20).
	MaxWait = 20 * time.Second
	// MaxRequeueDelay is SQS's longest visibility timeout (12 h); a longer
	// requeue delay is capped to it.
	MaxRequeueDelay = limits.SQSMaxVisibility
)

// Stable log message texts of the consumer (tests match them).
const (
	// LogUndecodable is logged at Warning for a received message that cannot
	// be decoded; it is presented as MT_UNACCEPTABLE and routed by the pump.
	LogUndecodable = "sqs message cannot be decoded; presenting it as unacceptable"
	// LogQueueLeaseUnread is logged at Warning by Resolve when
	// visibilityTimeout is 0 and the queue's own visibility timeout cannot
	// be read: the pump then manages no lease for it.
	LogQueueLeaseUnread = "sqs queue visibility timeout unread; leases not extended"
)

// ConsumerOptions configure a Consumer.
type ConsumerOptions struct {
	// Queue is the channel name (Brighter's ChannelName); the queue read is
	// QueueName(Queue, Fifo). Required.
	Queue string
	// QueueURL, when not "", is that queue's URL as already looked up
	// (makeChannels create or validate: ChannelMaker's Result.QueueURL):
	// the consumer then makes no GetQueueUrl for it. "" looks it up on
	// Resolve or the first receive.
	QueueURL string
	// Fifo means the queue (and the rejection queues) are FIFO.
	Fifo bool
	// Envelope is rawMessageDelivery: false: the queue is subscribed to SNS
	// and receives the SNS JSON envelope. The zero value reads raw delivery.
	Envelope bool
	// BufferSize is MaxNumberOfMessages per receive, 1..10 (0 means 1).
	BufferSize int
	// VisibilityTimeout, when positive, is asked for on each receive (whole
	// seconds); 0 leaves the queue's own, which Resolve reads so that the
	// pump keeps leases of that length (Lease).
	VisibilityTimeout time.Duration
	// DeadLetter is deadLetterRoutingKey: the SQS queue rejected messages are
	// sent to ("" for none); the name goes through QueueName(_, Fifo).
	DeadLetter string
	// Invalid is invalidMessageRoutingKey: the SQS queue unacceptable
	// messages are sent to ("" for none, then the dead-letter queue).
	Invalid string
	// Logger receives the consumer's and the router's records; nil means
	// slog.Default().
	Logger *slog.Logger
	// MaxHold, when positive and shorter than SQS's 12-hour ceiling on a
	// message's visibility (limits.SQS.MaxHold), is the ceiling MaxHold
	// reports instead, as if the message had been received that much
	// earlier than 12 hours before the ceiling: tests reach the ceiling in
	// seconds. 0 is SQS's own.
	MaxHold time.Duration
}

// Consumer reads one SQS queue. It implements broker.Consumer,
// broker.BatchAcknowledger, broker.Settler and broker.LeaseExtender, and
// is safe for concurrent use by several
// performers.
type Consumer struct {
	c      *Clients
	opts   ConsumerOptions
	name   string
	urls   *queueURLs
	router broker.Router
	log    *slog.Logger

	attrNames []string
	sysNames  []types.MessageSystemAttributeName

	// queueLease is the queue's own VisibilityTimeout (nanoseconds) as
	// Resolve read it when opts.VisibilityTimeout is 0; 0 when unread.
	queueLease atomic.Int64
}

var (
	_ broker.Consumer           = (*Consumer)(nil)
	_ broker.BatchAcknowledger  = (*Consumer)(nil)
	_ broker.Settler            = (*Consumer)(nil)
	_ broker.ConcurrentReceiver = (*Consumer)(nil)
	_ broker.LeaseExtender      = (*Consumer)(nil)
)

// decodedSystemAttributes are the system attributes Decode reads, the only
// ones Receive asks for: the receive count (the delivery count, NFR-1),
// the send time (the timestamp of a message that carries none), and a FIFO
// message's group id (its partition key) and deduplication id (its bag's
// messageDeduplicationId). "All" would add others (SenderId,
// ApproximateFirstReceiveTimestamp, SequenceNumber, AWSTraceHeader) that
// every receive would carry and deserialize for nothing.
var decodedSystemAttributes = []types.MessageSystemAttributeName{
	types.MessageSystemAttributeNameApproximateReceiveCount,
	types.MessageSystemAttributeNameSentTimestamp,
	types.MessageSystemAttributeNameMessageGroupId,
	types.MessageSystemAttributeNameMessageDeduplicationId,
}

// ReceivesConcurrently reports true: concurrent ReceiveMessage calls cannot
// reorder a partition key's messages, because a FIFO queue hands a message
// group to one receive at a time and holds its later messages back until the
// earlier ones are deleted, and a standard queue promises no order to keep.
// The Proactor then lets its receivers' long polls overlap.
func (k *Consumer) ReceivesConcurrently() bool { return true }

// NewConsumer makes a consumer. It makes no broker call: the queue URL is
// opts.QueueURL, or looked up on Resolve or the first receive. It returns
// an error for an empty queue name or a buffer size outside 1..10.
func NewConsumer(c *Clients, opts ConsumerOptions) (*Consumer, error) {
	if opts.Queue == "" {
		return nil, errors.New("sqs consumer: queue name is empty")
	}
	if opts.BufferSize == 0 {
		opts.BufferSize = 1
	}
	if opts.BufferSize < 1 || opts.BufferSize > MaxBufferSize {
		return nil, fmt.Errorf("sqs consumer for %s: bufferSize %d: valid values are 1..%d", opts.Queue, opts.BufferSize, MaxBufferSize)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	k := &Consumer{
		c: c, opts: opts, log: log,
		name:      QueueName(opts.Queue, opts.Fifo),
		urls:      &queueURLs{c: c.SQS, fifo: opts.Fifo, m: map[string]string{}},
		attrNames: []string{"All"},
		sysNames:  decodedSystemAttributes,
	}
	if opts.QueueURL != "" {
		k.urls.m[k.name] = opts.QueueURL
	}
	k.router = broker.Router{Publisher: publisher{k}, Settler: k, Logger: log, Source: k.name}
	if opts.DeadLetter != "" {
		k.router.DeadLetter = QueueName(opts.DeadLetter, opts.Fifo)
	}
	if opts.Invalid != "" {
		k.router.Invalid = QueueName(opts.Invalid, opts.Fifo)
	}
	return k, nil
}

// Resolve looks the queue's URL up now (GetQueueUrl, once, unless
// ConsumerOptions.QueueURL gave it; the first receive would otherwise), so
// that a command fails at start-up with one error when the queue is
// missing or the credentials are refused (the latter wraps
// broker.ErrNotAuthorized and names the endpoint and the credential
// source). Errors are as Receive's.
//
// With VisibilityTimeout 0 it also reads the queue's own visibility timeout
// (GetQueueAttributes, once), which the consumer's receives then get, so
// that Lease reports it and the pump extends leases of that length as it
// does a configured one. When it cannot be read, that is logged
// at Warning (LogQueueLeaseUnread) and not returned: the consumer works,
// but its leases are not extended. That Warning is also logged when the
// queue itself could not be looked up (consume carries on past a broker
// that does not answer yet, and the lease is not read later).
func (k *Consumer) Resolve(ctx context.Context) error {
	url, err := k.queueURL(ctx)
	if err != nil {
		err = classify(err)
		if k.opts.VisibilityTimeout <= 0 {
			k.log.WarnContext(ctx, LogQueueLeaseUnread, "sqs_queue", k.name, "error", err.Error())
		}
		return err
	}
	if k.opts.VisibilityTimeout > 0 || k.queueLease.Load() > 0 {
		return nil
	}
	d, err := k.readQueueLease(ctx, url)
	if err != nil {
		k.log.WarnContext(ctx, LogQueueLeaseUnread, "sqs_queue", k.name, "error", err.Error())
		return nil
	}
	k.queueLease.Store(int64(d))
	return nil
}

// readQueueLease is the VisibilityTimeout attribute of the queue at url.
func (k *Consumer) readQueueLease(ctx context.Context, url string) (time.Duration, error) {
	out, err := k.c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameVisibilityTimeout},
	})
	if err != nil {
		return 0, fmt.Errorf("visibility timeout of %s: %w", k.name, err)
	}
	v := out.Attributes[string(types.QueueAttributeNameVisibilityTimeout)]
	secs, err := strconv.Atoi(v)
	if err != nil || secs < 0 || secs > int(MaxRequeueDelay/time.Second) {
		return 0, fmt.Errorf("visibility timeout of %s: %q is not 0..%d seconds", k.name, v, int(MaxRequeueDelay/time.Second))
	}
	return time.Duration(secs) * time.Second, nil
}

// QueueName returns the name of the queue the consumer reads.
func (k *Consumer) QueueName() string { return k.name }

func (k *Consumer) queueURL(ctx context.Context) (string, error) {
	return k.urls.url(ctx, k.name)
}

// Receive makes one ReceiveMessage call for up to BufferSize messages,
// long-polling for timeout rounded to whole seconds (at most 20 s), asking
// for every message attribute and the system attributes Decode reads
// (decodedSystemAttributes: ApproximateReceiveCount comes with each
// message, NFR-1). Each message is decoded by Decode; one that
// cannot be decoded is logged at Warning and returned as MT_UNACCEPTABLE
// with its receipt (never dropped). A cancelled ctx returns no messages and
// no error. A failure that may pass (network, throttling, a server error)
// wraps broker.ErrChannelFailure; a missing queue or a refused credential
// does not.
func (k *Consumer) Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error) {
	url, err := k.queueURL(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, receiveError(err) // it names the queue already ("queue NAME: ...")
	}
	wait := int32(math.Round(min(max(timeout, 0), MaxWait).Seconds()))
	in := &sqs.ReceiveMessageInput{
		QueueUrl:                    &url,
		MaxNumberOfMessages:         int32(k.opts.BufferSize),
		WaitTimeSeconds:             wait,
		MessageAttributeNames:       k.attrNames,
		MessageSystemAttributeNames: k.sysNames,
	}
	if k.opts.VisibilityTimeout > 0 {
		in.VisibilityTimeout = int32(max(k.opts.VisibilityTimeout/time.Second, 1))
	}
	out, err := k.c.SQS.ReceiveMessage(ctx, in)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, receiveError(fmt.Errorf("ReceiveMessage from %s: %w", k.name, err))
	}
	if len(out.Messages) == 0 {
		return nil, nil
	}
	dopts := DecodeOptions{Envelope: k.opts.Envelope, DefaultTopic: k.name}
	ms := make([]*message.Message, len(out.Messages))
	for i := range out.Messages {
		m, err := Decode(out.Messages[i], dopts)
		if err != nil {
			k.log.WarnContext(ctx, LogUndecodable, "message_id", m.Header.MessageID, "sqs_message_id", aws.ToString(out.Messages[i].MessageId), "queue", k.name, "reason", err.Error())
		}
		ms[i] = m
	}
	return ms, nil
}

// staleCodes are the SQS error codes that say a receipt handle no longer
// holds its message (it was deleted, or its visibility timeout lapsed and
// it was received again).
var staleCodes = map[string]bool{
	"ReceiptHandleIsInvalid": true, "AWS.SimpleQueueService.ReceiptHandleIsInvalid": true,
	"MessageNotInflight": true, "AWS.SimpleQueueService.MessageNotInflight": true,
	"InvalidReceiptHandle": true,
}

// stale wraps err in broker.ErrStaleReceipt when SQS said the receipt is
// stale; otherwise it returns err unchanged.
func stale(err error) error {
	var api smithy.APIError
	if errors.As(err, &api) && staleCodes[api.ErrorCode()] {
		return fmt.Errorf("%w: %w", broker.ErrStaleReceipt, err)
	}
	return err
}

// staleEntry is stale for a failed batch entry's code.
func staleEntry(code string, err error) error {
	if staleCodes[code] {
		return fmt.Errorf("%w: %w", broker.ErrStaleReceipt, err)
	}
	return err
}

// Lease returns the visibility timeout the consumer asks for on each
// receive, in the whole seconds SQS grants; with VisibilityTimeout 0, the
// queue's own as Resolve read it, or 0 when it was not read (then the pump
// does not manage leases): broker.LeaseExtender.
func (k *Consumer) Lease() time.Duration {
	if k.opts.VisibilityTimeout <= 0 {
		return time.Duration(k.queueLease.Load())
	}
	return max(k.opts.VisibilityTimeout/time.Second, 1) * time.Second
}

// MaxHold is SQS's ceiling on a message's visibility: 12 hours from its
// receive, however often it is extended (limits.SQS.MaxHold), or the
// shorter ConsumerOptions.MaxHold: broker.LeaseCeiling.
func (k *Consumer) MaxHold() time.Duration {
	if h := k.opts.MaxHold; h > 0 && h < limits.SQS.MaxHold {
		return h
	}
	return limits.SQS.MaxHold
}

var _ broker.LeaseCeiling = (*Consumer)(nil)

// ExtendLeases sets the visibility timeout of each message to d from now
// (rounded up to whole seconds, at most 12 h) with
// ChangeMessageVisibilityBatch, ten per call (NFR-3): broker.LeaseExtender.
// A receipt SQS calls invalid or not in flight gets an error wrapping
// broker.ErrStaleReceipt.
func (k *Consumer) ExtendLeases(ctx context.Context, ms []*message.Message, d time.Duration) []error {
	secs := int32((min(max(d, time.Second), MaxRequeueDelay) + time.Second - 1) / time.Second)
	return k.visibilityBatch(ctx, ms, secs, "extend lease of")
}

// ReleaseBatch makes each message visible again at once
// (ChangeMessageVisibilityBatch with VisibilityTimeout 0, ten per call:
// one call where Requeue makes ten): broker.BatchReleaser. It returns one
// error per message, nil for success; a receipt SQS calls invalid or not in
// flight gets an error wrapping broker.ErrStaleReceipt.
func (k *Consumer) ReleaseBatch(ctx context.Context, ms []*message.Message) []error {
	return k.visibilityBatch(ctx, ms, 0, "release")
}

var _ broker.BatchReleaser = (*Consumer)(nil)

// visibilityBatch sets the visibility timeout of each message to secs
// seconds from now with ChangeMessageVisibilityBatch, ten per call; what
// names the operation in the error of a queue that cannot be resolved.
func (k *Consumer) visibilityBatch(ctx context.Context, ms []*message.Message, secs int32, what string) []error {
	errs := make([]error, len(ms))
	url, uerr := k.queueURL(ctx)
	for start := 0; start < len(ms); start += MaxBufferSize {
		end := min(start+MaxBufferSize, len(ms))
		if uerr != nil {
			for i := start; i < end; i++ {
				errs[i] = fmt.Errorf("%s %s: %w", what, ms[i].Header.MessageID, uerr)
			}
			continue
		}
		entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, 0, end-start)
		strs := newEntryStrings(end - start)
		for i := start; i < end; i++ {
			r, err := receiptOf(ms[i])
			if err != nil {
				errs[i] = err
				continue
			}
			entries = append(entries, types.ChangeMessageVisibilityBatchRequestEntry{Id: strs.ptr(strconv.Itoa(i)), ReceiptHandle: strs.ptr(r), VisibilityTimeout: secs})
		}
		if len(entries) == 0 {
			continue
		}
		out, err := k.c.SQS.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: entries})
		if err != nil {
			for _, e := range entries {
				i, _ := strconv.Atoi(*e.Id)
				errs[i] = fmt.Errorf("ChangeMessageVisibilityBatch %s on %s to %ds: %w", ms[i].Header.MessageID, k.name, secs, err)
			}
			continue
		}
		for _, f := range out.Failed {
			if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i >= start && i < end {
				errs[i] = staleEntry(aws.ToString(f.Code), fmt.Errorf("ChangeMessageVisibilityBatch %s on %s to %ds: %s: %s", ms[i].Header.MessageID, k.name, secs, aws.ToString(f.Code), aws.ToString(f.Message)))
			}
		}
	}
	return errs
}

// QueueGoneFix ends the error of a receive SQS refused because the queue
// does not exist: it was deleted while consuming (or never made, under
// makeChannels: assume). The pump stops on it (exit 1).
const QueueGoneFix = "the queue does not exist (deleted while consuming?): recreate it (aws sqs create-queue, with its attributes and redrive policy) or restart consume with makeChannels: create, which makes it as the file describes"

// classify wraps err in broker.ErrChannelFailure unless it is an error that
// retrying cannot cure.
func classify(err error) error {
	if queueMissing(err) {
		return err
	}
	if errors.Is(err, broker.ErrNotAuthorized) || authError(err) {
		return err // a refused credential: the pump stops
	}
	return fmt.Errorf("%w: %w", broker.ErrChannelFailure, err)
}

// receiveError is classify for a receive: a missing queue also says what
// to do (QueueGoneFix).
func receiveError(err error) error {
	if queueMissing(err) {
		return fmt.Errorf("%w: %s", err, QueueGoneFix)
	}
	return classify(err)
}

// queueMissing reports whether err says the queue does not exist
// (QueueDoesNotExist, or its error codes: a queue URL SQS does not know).
func queueMissing(err error) bool {
	var missing *types.QueueDoesNotExist
	if errors.As(err, &missing) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "InvalidAddress":
			return true
		}
	}
	return false
}

// entryStrings holds the Ids and receipt handles of one batch call's
// entries, which the SDK takes by pointer: one allocation a batch rather
// than two an entry.
type entryStrings struct{ s []string }

// newEntryStrings has room for the two strings of each of n entries.
func newEntryStrings(n int) entryStrings { return entryStrings{s: make([]string, 0, 2*n)} }

// ptr keeps v and returns a pointer to it. Past the room newEntryStrings
// made, the slice grows; the pointers handed out before keep the old
// array, whose strings do not change.
func (e *entryStrings) ptr(v string) *string {
	e.s = append(e.s, v)
	return &e.s[len(e.s)-1]
}

func receiptOf(m *message.Message) (string, error) {
	r, ok := m.Receipt.(string)
	if !ok || r == "" {
		return "", fmt.Errorf("message %s has no SQS receipt handle", m.Header.MessageID)
	}
	return r, nil
}

// Acknowledge deletes the message (one DeleteMessage).
func (k *Consumer) Acknowledge(ctx context.Context, m *message.Message) error {
	r, err := receiptOf(m)
	if err != nil {
		return err
	}
	url, err := k.queueURL(ctx)
	if err != nil {
		return fmt.Errorf("acknowledge %s: %w", m.Header.MessageID, err)
	}
	if _, err := k.c.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: &r}); err != nil {
		return stale(fmt.Errorf("DeleteMessage %s from %s: %w", m.Header.MessageID, k.name, err))
	}
	return nil
}

// AckBatchMax is the most messages one DeleteMessageBatch deletes (10,
// SQS's limit; broker.BatchAcknowledger).
func (k *Consumer) AckBatchMax() int { return MaxBufferSize }

// AcknowledgeBatch deletes the messages with DeleteMessageBatch, ten per
// call. It returns one error per message (nil for success).
func (k *Consumer) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	errs := make([]error, len(ms))
	url, uerr := k.queueURL(ctx)
	for start := 0; start < len(ms); start += MaxBufferSize {
		end := min(start+MaxBufferSize, len(ms))
		if uerr != nil {
			for i := start; i < end; i++ {
				errs[i] = fmt.Errorf("acknowledge %s: %w", ms[i].Header.MessageID, uerr)
			}
			continue
		}
		entries := make([]types.DeleteMessageBatchRequestEntry, 0, end-start)
		strs := newEntryStrings(end - start)
		for i := start; i < end; i++ {
			r, err := receiptOf(ms[i])
			if err != nil {
				errs[i] = err
				continue
			}
			entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: strs.ptr(strconv.Itoa(i)), ReceiptHandle: strs.ptr(r)})
		}
		if len(entries) == 0 {
			continue
		}
		out, err := k.c.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: entries})
		if err != nil {
			for _, e := range entries {
				i, _ := strconv.Atoi(*e.Id)
				errs[i] = fmt.Errorf("DeleteMessageBatch %s from %s: %w", ms[i].Header.MessageID, k.name, err)
			}
			continue
		}
		for _, f := range out.Failed {
			if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i >= start && i < end {
				errs[i] = staleEntry(aws.ToString(f.Code), fmt.Errorf("DeleteMessageBatch %s from %s: %s: %s", ms[i].Header.MessageID, k.name, aws.ToString(f.Code), aws.ToString(f.Message)))
			}
		}
	}
	return errs
}

// Requeue makes the message visible again after delay with one
// ChangeMessageVisibility (R-1 via the receive count, NFR-3): delay is
// rounded up to whole seconds and capped at 12 h; 0 means at once. The
// stored message is not rewritten.
func (k *Consumer) Requeue(ctx context.Context, m *message.Message, delay time.Duration) error {
	r, err := receiptOf(m)
	if err != nil {
		return err
	}
	url, err := k.queueURL(ctx)
	if err != nil {
		return fmt.Errorf("requeue %s: %w", m.Header.MessageID, err)
	}
	secs := int32(k.AppliedDelay(delay) / time.Second)
	if _, err := k.c.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: &r, VisibilityTimeout: secs}); err != nil {
		return stale(fmt.Errorf("ChangeMessageVisibility %s on %s to %ds: %w", m.Header.MessageID, k.name, secs, err))
	}
	return nil
}

// AppliedDelay returns the visibility timeout a Requeue with delay sets
// (broker.DelayApplier): delay rounded up to whole seconds, 0..12 h
// (MaxRequeueDelay); a longer delay is applied as 12 h.
func (k *Consumer) AppliedDelay(delay time.Duration) time.Duration {
	return (min(max(delay, 0), MaxRequeueDelay) + time.Second - 1) / time.Second * time.Second
}

// Release makes the message visible again after delay
// (ChangeMessageVisibility, capped at 12 h): the broker.Settler release of a
// failed rejection routing.
func (k *Consumer) Release(ctx context.Context, m *message.Message, delay time.Duration) error {
	return k.Requeue(ctx, m, delay)
}

// Reject routes the message through the shared broker.Router (R-15..R-19):
// SendMessage of the stamped copy to the dead-letter or invalid-message
// queue, then DeleteMessage; on a failed send a release (Release:
// ChangeMessageVisibility to broker.RoutingFailureDelay) and an Error log.
// The copy never carries the receipt handle and keeps the
// FIFO group id (its partition key).
func (k *Consumer) Reject(ctx context.Context, m *message.Message, r message.Rejection) broker.RejectResult {
	return k.router.Reject(ctx, m, r)
}

// Purge deletes every message of the queue (PurgeQueue).
func (k *Consumer) Purge(ctx context.Context) error {
	url, err := k.queueURL(ctx)
	if err != nil {
		return fmt.Errorf("purge %s: %w", k.name, err)
	}
	if _, err := k.c.SQS.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &url}); err != nil {
		return fmt.Errorf("PurgeQueue %s: %w", k.name, err)
	}
	return nil
}

// Close does nothing: messages still held return to the queue when their
// visibility timeout lapses.
func (k *Consumer) Close(ctx context.Context) error { return nil }

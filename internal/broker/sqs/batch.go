package sqs

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/message"
)

// Limits of one SendMessageBatch or PublishBatch call.
const (
	// MaxBatchEntries is the most entries one batch call takes (SQS and SNS).
	MaxBatchEntries = 10
	// MaxBatchBytes is the most payload (bodies plus attribute names, types
	// and values, in bytes) one batch call carries: 256 KiB, the limit SQS
	// and SNS have always had. A message larger than this alone is sent in a
	// batch of its own, where the broker judges it as it would a Send.
	MaxBatchBytes = 256 * 1024
)

// SendBatch publishes ms as Send would, but ten to a call: SendMessageBatch
// per queue, or PublishBatch per SNS topic, in the order given (so a FIFO
// group keeps its order within a destination). It returns one error per
// message (nil: the broker listed it as successful): a destination that
// cannot be resolved, an encoding error (ErrTooManyAttributes), an entry the
// broker refused (its code and message), a failed call, or an entry the
// broker did not mention at all. It implements broker.BatchProducer.
func (p *Producer) SendBatch(ctx context.Context, ms []*message.Message) []error {
	errs := make([]error, len(ms))
	byDest := map[string][]int{}
	var order []string
	for i, m := range ms {
		name := QueueName(m.Header.Topic, p.opts.Fifo)
		if p.opts.SNS {
			name = TopicName(m.Header.Topic, p.opts.Fifo)
		}
		if _, ok := byDest[name]; !ok {
			order = append(order, name)
		}
		byDest[name] = append(byDest[name], i)
	}
	for _, name := range order {
		idx := byDest[name]
		if p.opts.SNS {
			p.publishBatch(ctx, name, ms, idx, errs)
		} else {
			p.sendBatch(ctx, name, ms, idx, errs)
		}
	}
	return errs
}

// batchEntry is one encoded message of a batch: its index in the caller's
// slice and its payload size.
type batchEntry[E any] struct {
	i     int
	size  int
	entry E
}

// chunks splits entries into calls of at most MaxBatchEntries entries and
// MaxBatchBytes bytes, in order.
func chunks[E any](entries []batchEntry[E]) [][]batchEntry[E] {
	var out [][]batchEntry[E]
	var cur []batchEntry[E]
	size := 0
	for _, e := range entries {
		if len(cur) > 0 && (len(cur) == MaxBatchEntries || size+e.size > MaxBatchBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, e)
		size += e.size
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// batchResult is what the broker said about one batch call's entries, by
// entry id.
type batchResult struct {
	ok     map[string]bool
	failed map[string]string
	// words are refusals said in words (charsRefusal), by entry id.
	words map[string]error
}

func newBatchResult() batchResult {
	return batchResult{ok: map[string]bool{}, failed: map[string]string{}, words: map[string]error{}}
}

// refuse records a failed entry's code and message.
func (r batchResult) refuse(id, code, msg *string) {
	r.failed[aws.ToString(id)] = aws.ToString(code) + ": " + aws.ToString(msg)
}

// sendChunks makes one call per chunk of entries (see chunks) and records
// the outcome of every entry in errs: nil for one the broker listed as
// successful; its code and message for one it refused; the error of a
// failed call; an error for one it did not mention at all. op and dest
// name the call and destination in the errors.
func sendChunks[E any](entries []batchEntry[E], ms []*message.Message, errs []error, op, dest string, call func([]E) (batchResult, error)) {
	for _, chunk := range chunks(entries) {
		req := make([]E, len(chunk))
		for j, e := range chunk {
			req[j] = e.entry
		}
		res, callErr := call(req)
		for _, e := range chunk {
			id := strconv.Itoa(e.i)
			mid := ms[e.i].Header.MessageID
			switch {
			case callErr != nil:
				errs[e.i] = fmt.Errorf("%s %s to %s: %w", op, mid, dest, callErr)
			case res.ok[id]:
			case res.words[id] != nil:
				errs[e.i] = fmt.Errorf("%s %s to %s: refused: %w", op, mid, dest, res.words[id])
			case res.failed[id] != "":
				errs[e.i] = fmt.Errorf("%s %s to %s: refused: %s", op, mid, dest, res.failed[id])
			default:
				errs[e.i] = fmt.Errorf("%s %s to %s: the broker did not report the entry", op, mid, dest)
			}
		}
	}
}

// failAll gives every message of idx the error of its destination.
func failAll(ms []*message.Message, idx []int, errs []error, err error) {
	for _, i := range idx {
		errs[i] = fmt.Errorf("send message %s: %w", ms[i].Header.MessageID, err)
	}
}

// attrSize is the payload size of a batch entry's attributes in bytes.
func attrSize[V any](attrs map[string]V, typ, val func(V) *string) int {
	n := 0
	for k, v := range attrs {
		n += len(k) + len(aws.ToString(typ(v))) + len(aws.ToString(val(v)))
	}
	return n
}

func (p *Producer) sendBatch(ctx context.Context, name string, ms []*message.Message, idx []int, errs []error) {
	url, err := p.queues.url(ctx, name)
	if err != nil {
		failAll(ms, idx, errs, err)
		return
	}
	var entries []batchEntry[types.SendMessageBatchRequestEntry]
	for _, i := range idx {
		in, err := sqsSendInput(url, ms[i], p.opts.Attributes)
		if err != nil {
			errs[i] = err
			continue
		}
		size := sendSize(in)
		entries = append(entries, batchEntry[types.SendMessageBatchRequestEntry]{i: i, size: size, entry: types.SendMessageBatchRequestEntry{
			Id: aws.String(strconv.Itoa(i)), MessageBody: in.MessageBody, MessageAttributes: in.MessageAttributes,
			MessageGroupId: in.MessageGroupId, MessageDeduplicationId: in.MessageDeduplicationId, DelaySeconds: in.DelaySeconds,
		}})
	}
	sendChunks(entries, ms, errs, "SendMessageBatch", url, func(es []types.SendMessageBatchRequestEntry) (batchResult, error) {
		out, err := p.c.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: es})
		if err != nil {
			return batchResult{}, err
		}
		r := newBatchResult()
		for _, s := range out.Successful {
			r.ok[aws.ToString(s.Id)] = true
		}
		for _, f := range out.Failed {
			if aws.ToString(f.Code) == codeInvalidChars {
				if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i >= 0 && i < len(ms) {
					r.words[aws.ToString(f.Id)] = charsRefusal(sentBody(entries, i))
					continue
				}
			}
			r.refuse(f.Id, f.Code, f.Message)
		}
		return r, nil
	})
}

// sentBody is the body of the entry for message i ("" when none).
func sentBody(entries []batchEntry[types.SendMessageBatchRequestEntry], i int) string {
	for _, e := range entries {
		if e.i == i {
			return aws.ToString(e.entry.MessageBody)
		}
	}
	return ""
}

func (p *Producer) publishBatch(ctx context.Context, name string, ms []*message.Message, idx []int, errs []error) {
	arn, err := p.topics.arn(ctx, name)
	if err != nil {
		failAll(ms, idx, errs, err)
		return
	}
	var entries []batchEntry[snstypes.PublishBatchRequestEntry]
	for _, i := range idx {
		in, err := snsPublishInput(arn, ms[i], p.opts.Attributes, p.opts.Fifo)
		if err != nil {
			errs[i] = err
			continue
		}
		size := publishSize(in)
		entries = append(entries, batchEntry[snstypes.PublishBatchRequestEntry]{i: i, size: size, entry: snstypes.PublishBatchRequestEntry{
			Id: aws.String(strconv.Itoa(i)), Message: in.Message, MessageAttributes: in.MessageAttributes, Subject: in.Subject,
			MessageGroupId: in.MessageGroupId, MessageDeduplicationId: in.MessageDeduplicationId,
		}})
	}
	sendChunks(entries, ms, errs, "PublishBatch", arn, func(es []snstypes.PublishBatchRequestEntry) (batchResult, error) {
		out, err := p.c.SNS.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(arn), PublishBatchRequestEntries: es})
		if err != nil {
			return batchResult{}, err
		}
		r := newBatchResult()
		for _, s := range out.Successful {
			r.ok[aws.ToString(s.Id)] = true
		}
		for _, f := range out.Failed {
			r.refuse(f.Id, f.Code, f.Message)
		}
		return r, nil
	})
}

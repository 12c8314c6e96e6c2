package sqs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// closingBody fails every read once closed, as the SDK's request body does.
type closingBody struct {
	r      io.Reader
	closed atomic.Bool
}

func (b *closingBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errors.New("read on closed body")
	}
	return b.r.Read(p)
}

func (b *closingBody) Close() error { b.closed.Store(true); return nil }

type clientFunc func(*http.Request) (*http.Response, error)

func (f clientFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// TestBodyShield_TransportReadsItsOwnCopy: the body the transport reads
// stays whole and ends cleanly even when the SDK's body is closed first.
func TestBodyShield_TransportReadsItsOwnCopy(t *testing.T) {
	orig := &closingBody{r: strings.NewReader(`{"QueueUrl":"q"}`)}
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", orig)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 16
	var got string
	inner := clientFunc(func(r *http.Request) (*http.Response, error) {
		_ = orig.Close() // the SDK closes its body while the transport still reads
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		got = string(b)
		if n, err := r.Body.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			return nil, fmt.Errorf("read past the end: %d, %v; want 0, EOF", n, err)
		}
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	if _, err := (bodyShield{inner: inner}).Do(req); err != nil {
		t.Fatal(err)
	}
	if got != `{"QueueUrl":"q"}` || req.ContentLength != 16 {
		t.Fatalf("transport read %q", got)
	}
}

// TestBodyShield_WholeBodyWhateverTheDeclaredLength: the copy is the whole
// body when the request declares its length right, too short, too long or
// not at all; the request handed on declares the copy's length and its
// GetBody gives the copy again; the SDK's own request keeps its body, its
// declared length and its header.
func TestBodyShield_WholeBodyWhateverTheDeclaredLength(t *testing.T) {
	body := strings.Repeat(`{"Entries":[{"Id":"0","ReceiptHandle":"AQEB..."}]}`, 40)
	for _, declared := range []int64{int64(len(body)), 10, int64(len(body)) + 100, 0, -1} {
		orig := &closingBody{r: strings.NewReader(body)}
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", orig)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = declared
		req.Header.Set("X-Amz-Target", "AmazonSQS.DeleteMessageBatch")
		var got, again string
		var length int64
		inner := clientFunc(func(r *http.Request) (*http.Response, error) {
			if r == req {
				return nil, errors.New("the SDK's own request was handed on")
			}
			b, err := io.ReadAll(r.Body)
			if err != nil {
				return nil, err
			}
			got, length = string(b), r.ContentLength
			rc, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			b, err = io.ReadAll(rc)
			again = string(b)
			return &http.Response{StatusCode: 200, Body: http.NoBody}, err
		})
		if _, err := (bodyShield{inner: inner}).Do(req); err != nil {
			t.Fatalf("declared %d: %v", declared, err)
		}
		if got != body || again != body || length != int64(len(body)) {
			t.Errorf("declared %d: the transport read %d bytes (GetBody %d), declared %d; want %d each", declared, len(got), len(again), length, len(body))
		}
		if req.Body != orig || req.ContentLength != declared || req.Header.Get("X-Amz-Target") != "AmazonSQS.DeleteMessageBatch" || !orig.closed.Load() {
			t.Errorf("declared %d: the SDK's request changed (body %T, length %d) or its body was not closed", declared, req.Body, req.ContentLength)
		}
	}
}

// TestClients_NoConnectionClosedUnderAResponse moves 1,000 messages with
// ReceiveMessage / SendMessage / DeleteMessage on fauxqs, the SDK's retries
// off, and watches every request through httptrace: no request body may
// fail to be written (without bodyShield, about one request in forty
// does, and now and then the connection closes under a ReceiveMessage
// answer and its ten messages are lost to the visibility timeout).
func TestClients_NoConnectionClosedUnderAResponse(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	src, dst := uniq("shield-src"), uniq("shield-dst")
	setup(t, c, ChannelOptions{Queue: src}, ConsumerOptions{})
	setup(t, c, ChannelOptions{Queue: dst}, ConsumerOptions{})
	var writeErrs atomic.Int64
	var first atomic.Value
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) {
		if w.Err != nil {
			writeErrs.Add(1)
			first.CompareAndSwap(nil, w.Err.Error())
		}
	}})
	su, du := queueURL(t, c, src), queueURL(t, c, dst)
	const n = 1000
	for start := 0; start < n; start += 10 {
		var entries []types.SendMessageBatchRequestEntry
		for i := start; i < start+10; i++ {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)})
		}
		if _, err := c.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &su, Entries: entries}); err != nil {
			t.Fatal(err)
		}
	}
	noRetry := func(o *sqs.Options) { o.Retryer = aws.NopRetryer{} }
	moved := 0
	for moved < n {
		out, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &su, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageAttributeNames: []string{"All"}, VisibilityTimeout: 120}, noRetry)
		if err != nil {
			t.Fatalf("receive after %d moved: %v", moved, err)
		}
		if len(out.Messages) == 0 {
			t.Fatalf("queue empty after %d of %d moved", moved, n)
		}
		for _, m := range out.Messages {
			if _, err := c.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &du, MessageBody: m.Body}, noRetry); err != nil {
				t.Fatalf("send after %d moved: %v", moved, err)
			}
			if _, err := c.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &su, ReceiptHandle: m.ReceiptHandle}, noRetry); err != nil {
				t.Fatalf("delete after %d moved: %v", moved, err)
			}
			moved++
		}
	}
	if e := writeErrs.Load(); e > 0 {
		t.Fatalf("%d request bodies failed to be written (first: %v)", e, first.Load())
	}
}

func queueURL(t *testing.T, c *Clients, name string) string {
	t.Helper()
	u, err := c.SQS.GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(u.QueueUrl)
}

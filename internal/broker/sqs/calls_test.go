package sqs

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/faultproxy"
)

// recordedCalls is a broker.CallCounter that keeps every call.
type recordedCalls struct {
	mu    sync.Mutex
	calls []broker.Call
}

// CountCall records c.
func (r *recordedCalls) CountCall(c broker.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

// byOperation is how many calls of each operation were recorded.
func (r *recordedCalls) byOperation() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := map[string]int{}
	for _, c := range r.calls {
		n[c.Operation]++
	}
	return n
}

// TestCountCalls_EachAttemptAndEachBatchAsTheWireSeesThem: the clients
// count one call per request sent, as a counting proxy on the wire sees
// them: a DeleteMessageBatch of ten entries is one ack call, and one the
// service answers 500 and the SDK retries is two; each call names the
// queue by its short name and has the kind of its operation.
func TestCountCalls_EachAttemptAndEachBatchAsTheWireSeesThem(t *testing.T) {
	t.Parallel()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var failed atomic.Bool
	faulty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") == "AmazonSQS.DeleteMessageBatch" && failed.CompareAndSwap(false, true) {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"__type":"com.amazonaws.sqs#InternalError","message":"injected"}`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(faulty.Close)
	wire, err := faultproxy.StartSQSCounter(faulty.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wire.Close)
	rec := &recordedCalls{}
	c := NewCountedClientsFromConfig(sqstest.Config(), wire.URL(), rec).SQS

	ctx := context.Background()
	queue := "calls-" + strconv.FormatInt(time.Now().UnixNano()%1e12, 10)
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	var entries []types.SendMessageBatchRequestEntry
	for i := range 10 {
		entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String("m")})
	}
	if _, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: q.QueueUrl, Entries: entries}); err != nil {
		t.Fatal(err)
	}
	var handles []types.DeleteMessageBatchRequestEntry
	for len(handles) < 10 {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			handles = append(handles, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(len(handles))), ReceiptHandle: m.ReceiptHandle})
		}
	}
	res, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: q.QueueUrl, Entries: handles})
	if err != nil || len(res.Failed) > 0 {
		t.Fatalf("DeleteMessageBatch: %v %v", err, res)
	}
	if !failed.Load() {
		t.Fatal("the injected failure of DeleteMessageBatch never fired")
	}

	seen, counted := wire.Counts(), rec.byOperation()
	if len(seen) == 0 || len(seen) != len(counted) {
		t.Fatalf("counted %v, the wire saw %v", counted, seen)
	}
	for op, n := range seen {
		if counted[op] != n {
			t.Errorf("%s: counted %d calls, the wire saw %d (all: counted %v, seen %v)", op, counted[op], n, counted, seen)
		}
	}
	if seen["DeleteMessageBatch"] != 2 {
		t.Errorf("the wire saw %d DeleteMessageBatch, want 2 (one failed, one retried)", seen["DeleteMessageBatch"])
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, call := range rec.calls {
		if call.Transport != TransportName || call.Channel != queue || call.Kind != callKind(call.Operation) {
			t.Errorf("call %+v: want transport %q, channel %q and kind %q", call, TransportName, queue, callKind(call.Operation))
		}
	}
	for op, want := range map[string]broker.CallKind{"ReceiveMessage": broker.CallReceive, "DeleteMessageBatch": broker.CallAck,
		"SendMessageBatch": broker.CallPublish, "ChangeMessageVisibilityBatch": broker.CallVisibility, "CreateQueue": broker.CallOther} {
		if got := callKind(op); got != want {
			t.Errorf("kind of %s = %s, want %s", op, got, want)
		}
	}
}

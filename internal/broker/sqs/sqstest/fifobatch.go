package sqstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FIFOBatcher is test-only HTTP middleware in front of fauxqs that makes a
// FIFO queue's ReceiveMessage return several messages of one message group
// in order, as AWS does, where stock fauxqs returns at most one per group
// (docs/emulators.md). A row about a FIFO group under deferral (the
// later messages of the group received in the same batch as a deferred
// one) can only fail where a receive brings several of a group.
//
// How: on a receive from a queue whose URL ends in ".fifo" it first moves
// every message fauxqs will hand out into a stage of its own (ReceiveMessage,
// then DeleteMessage, until fauxqs returns none), keeping each message's
// JSON and its receive count; it then answers from the stage with SQS's
// FIFO rules: a group none of whose messages is in flight gives its
// messages from its head, in order, up to MaxNumberOfMessages; each gets a
// new receipt handle (the old one is stale), its ApproximateReceiveCount
// one higher, and is invisible for the receive's VisibilityTimeout (30 s
// when the request has none). DeleteMessage(Batch) and
// ChangeMessageVisibility(Batch) with a staged receipt act on the stage; a
// stale receipt is answered with success and changes nothing (as fauxqs
// and AWS do). Every other call, and every call on another queue, goes to
// fauxqs unchanged. State is in memory: a staged message lives only as long
// as the FIFOBatcher.
type FIFOBatcher struct {
	srv      *httptest.Server
	upstream string
	proxy    *httputil.ReverseProxy
	client   *http.Client

	mu     sync.Mutex
	seq    int
	queues map[string][]*staged
}

// staged is one message held by the FIFOBatcher.
type staged struct {
	raw       map[string]json.RawMessage // the message as fauxqs returned it
	group     string
	count     int // receives so far (ApproximateReceiveCount)
	receipt   string
	visibleAt time.Time
}

// StartFIFOBatcher starts a FIFOBatcher in front of the fauxqs at endpoint;
// Endpoint is its own base URL. Close stops it.
func StartFIFOBatcher(endpoint string) (*FIFOBatcher, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("fifo batcher: fauxqs endpoint %q: %w", endpoint, err)
	}
	b := &FIFOBatcher{upstream: strings.TrimSuffix(endpoint, "/"), proxy: httputil.NewSingleHostReverseProxy(u),
		client: &http.Client{Timeout: 30 * time.Second}, queues: map[string][]*staged{}}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	return b, nil
}

// Endpoint is the base URL clients use instead of fauxqs's.
func (b *FIFOBatcher) Endpoint() string { return b.srv.URL }

// Close stops the server.
func (b *FIFOBatcher) Close() { b.srv.Close() }

const jsonTarget = "AmazonSQS."

func (b *FIFOBatcher) serve(w http.ResponseWriter, r *http.Request) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), jsonTarget)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req map[string]json.RawMessage
	_ = json.Unmarshal(body, &req)
	var queue string
	_ = json.Unmarshal(req["QueueUrl"], &queue)
	if !strings.HasSuffix(queue, ".fifo") {
		b.proxy.ServeHTTP(w, r)
		return
	}
	var out any
	switch op {
	case "ReceiveMessage":
		out, err = b.receive(r.Context(), r.Header, queue, req)
	case "DeleteMessage":
		out = b.settle(queue, req, -1)
	case "ChangeMessageVisibility":
		var vt int
		_ = json.Unmarshal(req["VisibilityTimeout"], &vt)
		out = b.settle(queue, req, vt)
	case "DeleteMessageBatch", "ChangeMessageVisibilityBatch":
		out = b.batch(queue, req, op == "DeleteMessageBatch")
	case "PurgeQueue":
		b.mu.Lock()
		delete(b.queues, queue)
		b.mu.Unlock()
		b.proxy.ServeHTTP(w, r)
		return
	default:
		b.proxy.ServeHTTP(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(out)
}

// call sends one JSON-protocol request to fauxqs.
func (b *FIFOBatcher) call(ctx context.Context, h http.Header, op string, req any) (map[string]json.RawMessage, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, b.upstream+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"} {
		if v := h.Get(k); v != "" {
			hr.Header.Set(k, v)
		}
	}
	hr.Header.Set("Content-Type", "application/x-amz-json-1.0")
	hr.Header.Set("X-Amz-Target", jsonTarget+op)
	resp, err := b.client.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("fifo batcher: %s: %w", op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("fifo batcher: %s: %w", op, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fifo batcher: %s: %s: %s", op, resp.Status, data)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("fifo batcher: %s answer: %w", op, err)
	}
	return out, nil
}

// topUp moves everything fauxqs will hand out of queue into the stage;
// b.mu is held.
func (b *FIFOBatcher) topUp(ctx context.Context, h http.Header, queue string, req map[string]json.RawMessage) error {
	for {
		q := map[string]json.RawMessage{}
		for k, v := range req {
			q[k] = v
		}
		q["MaxNumberOfMessages"] = json.RawMessage("10")
		q["WaitTimeSeconds"] = json.RawMessage("0")
		q["VisibilityTimeout"] = json.RawMessage("600")
		delete(q, "ReceiveRequestAttemptId")
		out, err := b.call(ctx, h, "ReceiveMessage", q)
		if err != nil {
			return err
		}
		var ms []map[string]json.RawMessage
		_ = json.Unmarshal(out["Messages"], &ms)
		if len(ms) == 0 {
			return nil
		}
		for _, m := range ms {
			var receipt string
			_ = json.Unmarshal(m["ReceiptHandle"], &receipt)
			var attrs map[string]string
			_ = json.Unmarshal(m["Attributes"], &attrs)
			n, _ := strconv.Atoi(attrs["ApproximateReceiveCount"])
			if _, err := b.call(ctx, h, "DeleteMessage", map[string]string{"QueueUrl": queue, "ReceiptHandle": receipt}); err != nil {
				return err
			}
			b.queues[queue] = append(b.queues[queue], &staged{raw: m, group: attrs["MessageGroupId"], count: max(n-1, 0)})
		}
	}
}

func (b *FIFOBatcher) receive(ctx context.Context, h http.Header, queue string, req map[string]json.RawMessage) (any, error) {
	maxN, wait, vt := 1, 0, 30
	_ = json.Unmarshal(req["MaxNumberOfMessages"], &maxN)
	_ = json.Unmarshal(req["WaitTimeSeconds"], &wait)
	if v, ok := req["VisibilityTimeout"]; ok {
		_ = json.Unmarshal(v, &vt)
	}
	deadline := time.Now().Add(time.Duration(wait) * time.Second)
	for {
		b.mu.Lock()
		err := b.topUp(ctx, h, queue, req)
		var got []map[string]json.RawMessage
		if err == nil {
			got = b.take(queue, max(maxN, 1), time.Duration(vt)*time.Second)
		}
		b.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if len(got) > 0 || !time.Now().Before(deadline) {
			return map[string]any{"Messages": got}, nil
		}
		select {
		case <-ctx.Done():
			return map[string]any{"Messages": got}, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// take hands out up to n staged messages by SQS's FIFO rules; b.mu is held.
func (b *FIFOBatcher) take(queue string, n int, vt time.Duration) []map[string]json.RawMessage {
	now := time.Now()
	busy := map[string]bool{}
	for _, s := range b.queues[queue] {
		if s.receipt != "" && s.visibleAt.After(now) {
			busy[s.group] = true
		}
	}
	var out []map[string]json.RawMessage
	for _, s := range b.queues[queue] {
		if len(out) == n {
			break
		}
		if busy[s.group] {
			continue
		}
		b.seq++
		s.count++
		s.receipt = fmt.Sprintf("fifobatch-%d", b.seq)
		s.visibleAt = now.Add(vt)
		m := map[string]json.RawMessage{}
		for k, v := range s.raw {
			m[k] = v
		}
		m["ReceiptHandle"], _ = json.Marshal(s.receipt)
		var attrs map[string]string
		_ = json.Unmarshal(s.raw["Attributes"], &attrs)
		if attrs == nil {
			attrs = map[string]string{}
		}
		attrs["ApproximateReceiveCount"] = strconv.Itoa(s.count)
		m["Attributes"], _ = json.Marshal(attrs)
		out = append(out, m)
	}
	return out
}

// settleOne deletes (vt < 0) or changes the visibility of the staged
// message holding receipt; a stale receipt changes nothing. b.mu is held.
func (b *FIFOBatcher) settleOne(queue, receipt string, vt int) {
	ss := b.queues[queue]
	for i, s := range ss {
		if s.receipt != receipt {
			continue
		}
		if vt < 0 {
			b.queues[queue] = append(ss[:i:i], ss[i+1:]...)
		} else {
			s.visibleAt = time.Now().Add(time.Duration(vt) * time.Second)
		}
		return
	}
}

func (b *FIFOBatcher) settle(queue string, req map[string]json.RawMessage, vt int) any {
	var receipt string
	_ = json.Unmarshal(req["ReceiptHandle"], &receipt)
	b.mu.Lock()
	b.settleOne(queue, receipt, vt)
	b.mu.Unlock()
	return map[string]any{}
}

func (b *FIFOBatcher) batch(queue string, req map[string]json.RawMessage, del bool) any {
	var entries []struct {
		ID                string `json:"Id"`
		ReceiptHandle     string
		VisibilityTimeout int
	}
	_ = json.Unmarshal(req["Entries"], &entries)
	ok := make([]map[string]string, 0, len(entries))
	b.mu.Lock()
	for _, e := range entries {
		vt := e.VisibilityTimeout
		if del {
			vt = -1
		}
		b.settleOne(queue, e.ReceiptHandle, vt)
		ok = append(ok, map[string]string{"Id": e.ID})
	}
	b.mu.Unlock()
	return map[string]any{"Successful": ok, "Failed": []any{}}
}

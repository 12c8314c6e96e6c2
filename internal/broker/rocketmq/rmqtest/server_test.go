package rmqtest_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
)

type fixture struct {
	t   *testing.T
	srv *rmqtest.Server
	cli v2.MessagingServiceClient
	ctx context.Context
}

func start(t *testing.T, opts rmqtest.Options) *fixture {
	t.Helper()
	srv, err := rmqtest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	conn, err := grpc.NewClient(srv.Endpoint(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}))) //nolint:gosec // self-signed test certificate
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return &fixture{t: t, srv: srv, cli: v2.NewMessagingServiceClient(conn), ctx: ctx}
}

func (f *fixture) send(topic, id, group string) {
	f.t.Helper()
	sp := &v2.SystemProperties{MessageId: id}
	if group != "" {
		sp.MessageGroup = &group
	}
	resp, err := f.cli.SendMessage(f.ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: topic}, SystemProperties: sp, Body: []byte(id)}}})
	if err != nil || resp.GetStatus().GetCode() != v2.Code_OK {
		f.t.Fatalf("send %s: %v %v", id, err, resp.GetStatus())
	}
}

// receive returns the status and the messages of one ReceiveMessage call
// (long poll bounded by a 3.6 s deadline, so about 600 ms).
func (f *fixture) receive(topic, group string, batch int32, invisible time.Duration) (*v2.Status, []*v2.Message) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, 3600*time.Millisecond)
	defer cancel()
	stream, err := f.cli.ReceiveMessage(ctx, &v2.ReceiveMessageRequest{
		Group: &v2.Resource{Name: group}, MessageQueue: &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: 0},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: batch,
		InvisibleDuration: durationpb.New(invisible),
	})
	if err != nil {
		f.t.Fatal(err)
	}
	var st *v2.Status
	var msgs []*v2.Message
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.t.Fatal(err)
		}
		if s := r.GetStatus(); s != nil {
			st = s
		}
		if m := r.GetMessage(); m != nil {
			msgs = append(msgs, m)
		}
	}
	return st, msgs
}

func (f *fixture) ack(topic, group string, m *v2.Message, handle string) v2.Code {
	f.t.Helper()
	resp, err := f.cli.AckMessage(f.ctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic},
		Entries: []*v2.AckMessageEntry{{MessageId: m.GetSystemProperties().GetMessageId(), ReceiptHandle: handle}}})
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.GetStatus().GetCode()
}

func (f *fixture) change(topic, group string, m *v2.Message, handle string, d time.Duration) (v2.Code, string) {
	f.t.Helper()
	resp, err := f.cli.ChangeInvisibleDuration(f.ctx, &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic},
		ReceiptHandle: handle, InvisibleDuration: durationpb.New(d), MessageId: m.GetSystemProperties().GetMessageId()})
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.GetStatus().GetCode(), resp.GetReceiptHandle()
}

func ids(ms []*v2.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.GetSystemProperties().GetMessageId())
	}
	return out
}

func TestRoutesAndEmptyReceive(t *testing.T) {
	f := start(t, rmqtest.Options{})
	r, err := f.cli.QueryRoute(f.ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "nope"}})
	if err != nil || r.GetStatus().GetCode() != v2.Code_TOPIC_NOT_FOUND {
		t.Fatalf("missing topic: %v %v", err, r.GetStatus())
	}
	f.srv.CreateTopic("t")
	r, err = f.cli.QueryRoute(f.ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "t"}})
	if err != nil || len(r.GetMessageQueues()) != 1 || r.GetMessageQueues()[0].GetBroker().GetEndpoints().GetAddresses()[0].GetHost() != "127.0.0.1" {
		t.Fatalf("route: %v %v", err, r)
	}
	if st, ms := f.receive("t", "g", 1, time.Second); st.GetCode() != v2.Code_MESSAGE_NOT_FOUND || len(ms) != 0 {
		t.Fatalf("empty receive: %v %d", st, len(ms))
	}
}

// Messages of one group come in order, one at a time; other groups and
// ungrouped messages are not held back.
func TestMessageGroupsInOrderOneAtATime(t *testing.T) {
	f := start(t, rmqtest.Options{})
	f.srv.CreateTopic("t")
	f.send("t", "a1", "A")
	f.send("t", "a2", "A")
	f.send("t", "b1", "B")
	f.send("t", "n1", "")
	st, ms := f.receive("t", "g", 10, 5*time.Second)
	if got := ids(ms); st.GetCode() != v2.Code_OK || len(got) != 3 || got[0] != "a1" || got[1] != "b1" || got[2] != "n1" {
		t.Fatalf("first receive %v %v", st, got)
	}
	if _, more := f.receive("t", "g", 10, 5*time.Second); len(more) != 0 {
		t.Fatalf("a2 delivered while a1 in flight: %v", ids(more))
	}
	if code := f.ack("t", "g", ms[0], ms[0].GetSystemProperties().GetReceiptHandle()); code != v2.Code_OK {
		t.Fatalf("ack a1: %v", code)
	}
	if _, next := f.receive("t", "g", 10, 5*time.Second); len(next) != 1 || ids(next)[0] != "a2" {
		t.Fatalf("after ack: %v", ids(next))
	}
	// Another consumer group reads the whole topic on its own.
	if _, other := f.receive("t", "g2", 10, 5*time.Second); len(other) != 3 {
		t.Fatalf("group g2 got %v", ids(other))
	}
}

// Receipt handles go stale on ChangeInvisibleDuration, on a lapse and on ack;
// each redelivery has delivery_attempt + 1.
func TestReceiptHandlesAndAttempts(t *testing.T) {
	f := start(t, rmqtest.Options{})
	f.srv.CreateTopic("t")
	f.send("t", "m", "")
	_, ms := f.receive("t", "g", 1, 5*time.Second)
	m := ms[0]
	h1 := m.GetSystemProperties().GetReceiptHandle()
	if m.GetSystemProperties().GetDeliveryAttempt() != 1 || h1 == "" {
		t.Fatalf("first delivery %v", m.GetSystemProperties())
	}
	code, h2 := f.change("t", "g", m, h1, 5*time.Second)
	if code != v2.Code_OK || h2 == "" || h2 == h1 {
		t.Fatalf("change: %v %q", code, h2)
	}
	if code := f.ack("t", "g", m, h1); code != v2.Code_INVALID_RECEIPT_HANDLE {
		t.Fatalf("ack with superseded handle: %v", code)
	}
	if code, _ := f.change("t", "g", m, h2, 0); code != v2.Code_OK {
		t.Fatalf("change to 0: %v", code)
	}
	_, ms = f.receive("t", "g", 1, 150*time.Millisecond)
	if len(ms) != 1 || ms[0].GetSystemProperties().GetDeliveryAttempt() != 2 {
		t.Fatalf("after change 0: %v", ms)
	}
	h3 := ms[0].GetSystemProperties().GetReceiptHandle()
	// Lapse: the next receive waits for it and presents attempt 3.
	_, ms = f.receive("t", "g", 1, 5*time.Second)
	if len(ms) != 1 || ms[0].GetSystemProperties().GetDeliveryAttempt() != 3 {
		t.Fatalf("after lapse: %v", ms)
	}
	if code := f.ack("t", "g", m, h3); code != v2.Code_INVALID_RECEIPT_HANDLE {
		t.Fatalf("ack with lapsed handle: %v", code)
	}
	h4 := ms[0].GetSystemProperties().GetReceiptHandle()
	if code := f.ack("t", "g", m, h4); code != v2.Code_OK {
		t.Fatalf("ack current: %v", code)
	}
	if code := f.ack("t", "g", m, h4); code != v2.Code_INVALID_RECEIPT_HANDLE {
		t.Fatalf("second ack: %v", code)
	}
	if f.srv.Pending("t", "g") != 0 {
		t.Fatalf("pending after ack")
	}
}

// TestNativeDeadLetter_MovesUnchangedAfterMaxDeliveries: after the group's max
// deliveries the message moves, unchanged, to %DLQ%<group> when its lease
// lapses, even with no one receiving.
func TestNativeDeadLetter_MovesUnchangedAfterMaxDeliveries(t *testing.T) {
	f := start(t, rmqtest.Options{MaxDeliveryAttempts: 2})
	f.srv.CreateTopic("t")
	f.send("t", "m", "")
	for i := 0; i < 2; i++ {
		_, ms := f.receive("t", "g", 1, 5*time.Second)
		if len(ms) != 1 {
			t.Fatalf("delivery %d missing", i+1)
		}
		if code, _ := f.change("t", "g", ms[0], ms[0].GetSystemProperties().GetReceiptHandle(), 0); code != v2.Code_OK {
			t.Fatalf("change: %v", code)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(f.srv.Messages(rmqtest.DLQPrefix+"g")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("not dead-lettered")
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	dl := f.srv.Messages(rmqtest.DLQPrefix + "g")[0]
	if dl.MessageID != "m" || string(dl.Body) != "m" {
		t.Fatalf("dlq copy %+v", dl)
	}
	if _, ms := f.receive("t", "g", 1, time.Second); len(ms) != 0 {
		t.Fatalf("delivered again after dead-lettering")
	}
}

// TestFaultHooks_FailCallsUntilClearedAndKeepHandlesUsable: FailSend,
// FailChangeInvisibleDuration and FailAck make those calls fail (a failed
// send stores nothing); once cleared, the receipt handle still acknowledges,
// and every call is counted.
func TestFaultHooks_FailCallsUntilClearedAndKeepHandlesUsable(t *testing.T) {
	f := start(t, rmqtest.Options{})
	f.srv.CreateTopic("t")
	boom := func(string, string) error { return errors.New("boom") }
	f.srv.FailSend(boom)
	resp, err := f.cli.SendMessage(f.ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: "t"}, SystemProperties: &v2.SystemProperties{MessageId: "x"}}}})
	if err != nil || resp.GetStatus().GetCode() == v2.Code_OK || len(f.srv.Messages("t")) != 0 {
		t.Fatalf("send fault: %v %v", err, resp.GetStatus())
	}
	f.srv.FailSend(nil)
	f.send("t", "m", "")
	_, ms := f.receive("t", "g", 1, 5*time.Second)
	h := ms[0].GetSystemProperties().GetReceiptHandle()
	f.srv.FailChangeInvisibleDuration(boom)
	if code, _ := f.change("t", "g", ms[0], h, 0); code == v2.Code_OK {
		t.Fatal("change fault not applied")
	}
	f.srv.FailAck(boom)
	if code := f.ack("t", "g", ms[0], h); code == v2.Code_OK {
		t.Fatal("ack fault not applied")
	}
	f.srv.FailAck(nil)
	if code := f.ack("t", "g", ms[0], h); code != v2.Code_OK {
		t.Fatalf("handle unusable after faults: %v", code)
	}
	if f.srv.Calls("AckMessage") != 2 || f.srv.Calls("SendMessage") != 2 {
		t.Fatalf("calls: ack %d send %d", f.srv.Calls("AckMessage"), f.srv.Calls("SendMessage"))
	}
}

// TestStartsNeverRaceForAPort: Start binds port 0 and keeps the
// listener it got, so starts side by side each get a port of their own and
// none fails.
func TestStartsNeverRaceForAPort(t *testing.T) {
	const n = 8
	type result struct {
		srv *rmqtest.Server
		err error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			srv, err := rmqtest.Start(rmqtest.Options{})
			results <- result{srv, err}
		}()
	}
	seen := map[string]bool{}
	for range n {
		r := <-results
		if r.err != nil {
			t.Errorf("start: %v", r.err)
			continue
		}
		t.Cleanup(r.srv.Close)
		if seen[r.srv.Endpoint()] {
			t.Errorf("two servers on %s", r.srv.Endpoint())
		}
		seen[r.srv.Endpoint()] = true
	}
}

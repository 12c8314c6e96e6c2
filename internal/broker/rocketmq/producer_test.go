package rocketmq_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
)

// On the wire, through the real client: group from the partition key, keys
// and tag from the bag, the publication topic rather than the header topic.
func TestProducer_WireFormatOnBroker(t *testing.T) {
	e := newEnv(t, "pub-topic")
	m := message.New("m-1", "header-topic", message.MTEvent, []byte("hi"))
	m.Header.PartitionKey = "customer-1"
	m.Header.Bag[rocketmq.BagKeys] = "order-42"
	m.Header.Bag[rocketmq.BagTag] = "created"
	if err := e.producer("pub-topic").Send(e.ctx, m); err != nil {
		t.Fatalf("send: %v", err)
	}
	got := e.srv.Messages("pub-topic")
	if len(got) != 1 {
		t.Fatalf("stored %d", len(got))
	}
	s := got[0]
	if s.MessageGroup != "customer-1" || s.Tag != "created" || !reflect.DeepEqual(s.Keys, []string{"order-42"}) {
		t.Fatalf("group %q tag %q keys %v", s.MessageGroup, s.Tag, s.Keys)
	}
	if s.Properties[rocketmq.PropTopic] != "header-topic" || s.Properties[rocketmq.PropID] != "m-1" {
		t.Fatalf("properties %v", s.Properties)
	}
	// A tag filter selects it; the tag comes back as the steering bag entry.
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "pub-topic", ConsumerGroup: "g", TagFilter: "created || updated"})
	r := e.receiveOne(c, 5*time.Second)
	if r.Header.PartitionKey != "customer-1" || r.Header.Bag[rocketmq.BagTag] != "created" || r.Header.Topic != "pub-topic" {
		t.Fatalf("received header %+v", r.Header)
	}
}

func TestProducer_MissingTopicFails(t *testing.T) {
	e := newEnv(t)
	if _, err := rocketmq.NewProducer(e.ctx, rocketmq.ProducerOptions{Connection: e.conn(), Topic: "nope"}); err == nil {
		t.Fatal("producer on a missing topic started")
	}
	if _, err := rocketmq.NewConsumer(e.ctx, rocketmq.ConsumerOptions{Connection: e.conn(), Topic: "nope", ConsumerGroup: "g"}); err == nil {
		t.Fatal("consumer on a missing topic started")
	}
	if _, err := rocketmq.NewConsumer(e.ctx, rocketmq.ConsumerOptions{Connection: e.conn(), Topic: "t"}); err == nil || !strings.Contains(err.Error(), "consumerGroup") {
		t.Fatalf("missing group: %v", err)
	}
}

func TestChannels_ValidateChecksRoutes(t *testing.T) {
	e := newEnv(t, "orders")
	ok := rocketmq.Channels{Connection: e.conn(), Make: broker.MakeValidate, Topics: []string{"orders"}}
	if err := ok.EnsureChannels(e.ctx); err != nil {
		t.Fatalf("validate existing: %v", err)
	}
	bad := rocketmq.Channels{Connection: e.conn(), Make: broker.MakeValidate, Topics: []string{"orders", "orders.dlq"}}
	if err := bad.EnsureChannels(e.ctx); err == nil || !strings.Contains(err.Error(), "orders.dlq") {
		t.Fatalf("validate missing: %v", err)
	}
	log, logs := newLogger()
	create := rocketmq.Channels{Connection: e.conn(), Make: broker.MakeCreate, Topics: []string{"x"}, Logger: log}
	if err := create.EnsureChannels(context.Background()); err != nil || e.srv.HasTopic("x") {
		t.Fatalf("create: err %v, topic made %v", err, e.srv.HasTopic("x"))
	}
	if !strings.Contains(logs.String(), rocketmq.LogNoCreate) {
		t.Errorf("no Info %q", rocketmq.LogNoCreate)
	}
}

// TestConfigureClientLog_RedirectsAwayFromLogs: The client's own log is
// redirected away from /logs (docs/emulators.md#rmqtest-rocketmq-5).
func TestConfigureClientLog_RedirectsAwayFromLogs(t *testing.T) {
	dir := rocketmq.ConfigureClientLog(t.TempDir())
	if dir == "" || strings.HasPrefix(dir, "/logs") {
		t.Fatalf("client log dir %q", dir)
	}
	if got := os.Getenv("rocketmq.client.logRoot"); got != dir {
		t.Fatalf("rocketmq.client.logRoot = %q, want %q", got, dir)
	}
	if d := rocketmq.DefaultClientLogDir(); strings.HasPrefix(d, "/logs") || d == "" {
		t.Fatalf("default dir %q", d)
	}
}

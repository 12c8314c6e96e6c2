package main

import (
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

func dlqOpts(env map[string]string) *dlqOptions {
	io := &IOStreams{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	return &dlqOptions{io: io}
}

// TestDLQResolveURL_PubSubAndRocketMQ checks the two URL forms of issue 7's
// addressing: connection settings from flags and environment, a raw or
// escaped %DLQ% topic, the reader group from ?group=, --group or the default.
func TestDLQResolveURL_PubSubAndRocketMQ(t *testing.T) {
	o := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "proxy:8081", "ROCKETMQ_NAMESPACE": "ns"})
	tg, err := o.resolve("pubsub://projects/acme/subscriptions/orders-dlq")
	if err != nil {
		t.Fatal(err)
	}
	if tg.s.Transport != config.TransportGCP || tg.dest != "orders-dlq" || tg.f.Connections.GCP.ProjectID != "acme" || tg.url != "pubsub://projects/acme/subscriptions/orders-dlq" {
		t.Errorf("pubsub target %+v (url %s)", tg.s, tg.url)
	}
	for _, raw := range []string{"rocketmq://%DLQ%orders?group=ops", "rocketmq://%25DLQ%25orders?group=ops"} {
		tg, err := o.resolve(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if tg.dest != "%DLQ%orders" || tg.group != "ops" || tg.f.Connections.RocketMQ.Endpoint != "proxy:8081" || tg.f.Connections.RocketMQ.Namespace != "ns" {
			t.Errorf("%s: dest %q group %q connection %+v", raw, tg.dest, tg.group, tg.f.Connections.RocketMQ)
		}
	}
	tg, err = o.resolve("rocketmq://orders-dlq")
	if err != nil || tg.group != defaultURLReaderGroup {
		t.Errorf("default reader group: %+v %v", tg, err)
	}
	o.group, o.rocketmqEndpoint = "mine", "flag:9876"
	tg, err = o.resolve("rocketmq://orders-dlq?group=ops")
	if err != nil || tg.group != "mine" || tg.f.Connections.RocketMQ.Endpoint != "flag:9876" {
		t.Errorf("--group and --rocketmq-endpoint win: %+v %v", tg, err)
	}
}

// TestDLQResolveURL_Errors checks that a malformed URL is a usage error that
// says what to write.
func TestDLQResolveURL_Errors(t *testing.T) {
	cases := map[string]string{
		"pubsub://orders-dlq":          "want pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION",
		"rocketmq://?group=g":          "names no topic",
		"kafka://orders":               "valid schemes are sqs, pubsub, rocketmq, memory",
		"pubsub://projects/p/topics/t": "want pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION",
	}
	for arg, want := range cases {
		_, err := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "x:1"}).resolve(arg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", arg, err, want)
		}
	}
	if _, err := dlqOpts(nil).resolve("rocketmq://orders-dlq"); err == nil || !strings.Contains(err.Error(), "ROCKETMQ_ENDPOINT") {
		t.Errorf("no endpoint: error %v, want one naming ROCKETMQ_ENDPOINT", err)
	}
}

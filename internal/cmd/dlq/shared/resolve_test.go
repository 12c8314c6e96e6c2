package shared

import (
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/transport"
)

func dlqOpts(env map[string]string) *Options {
	io := &iostreams.IOStreams{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	return &Options{IO: io, Transports: transport.Default()}
}

// TestDLQResolveURL_PubSubAndRocketMQ checks the two URL forms of the dlq
// addressing (docs/commands/dlq.md): connection settings from flags and environment, a raw or
// escaped %DLQ% topic, the reader group from ?group=, --group or the default.
func TestDLQResolveURL_PubSubAndRocketMQ(t *testing.T) {
	o := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "proxy:8081", "ROCKETMQ_NAMESPACE": "ns"})
	tg, err := o.Resolve("pubsub://projects/acme/subscriptions/orders-dlq")
	if err != nil {
		t.Fatal(err)
	}
	if tg.S.Transport != config.TransportGCP || tg.Dest != "orders-dlq" || tg.F.Connections.GCP.ProjectID != "acme" || tg.URL != "pubsub://projects/acme/subscriptions/orders-dlq" {
		t.Errorf("pubsub target %+v (url %s)", tg.S, tg.URL)
	}
	for _, raw := range []string{"rocketmq://%DLQ%orders?group=ops", "rocketmq://%25DLQ%25orders?group=ops"} {
		tg, err := o.Resolve(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if tg.Dest != "%DLQ%orders" || tg.Group != "ops" || tg.F.Connections.RocketMQ.Endpoint != "proxy:8081" || tg.F.Connections.RocketMQ.Namespace != "ns" {
			t.Errorf("%s: dest %q group %q connection %+v", raw, tg.Dest, tg.Group, tg.F.Connections.RocketMQ)
		}
	}
	tg, err = o.Resolve("rocketmq://orders-dlq")
	if err != nil || tg.Group != defaultURLReaderGroup {
		t.Errorf("default reader group: %+v %v", tg, err)
	}
	o.Group, o.RocketMQEndpoint = "mine", "flag:9876"
	tg, err = o.Resolve("rocketmq://orders-dlq?group=ops")
	if err != nil || tg.Group != "mine" || tg.F.Connections.RocketMQ.Endpoint != "flag:9876" {
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
		_, err := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "x:1"}).Resolve(arg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", arg, err, want)
		}
	}
	if _, err := dlqOpts(nil).Resolve("rocketmq://orders-dlq"); err == nil || !strings.Contains(err.Error(), "ROCKETMQ_ENDPOINT") {
		t.Errorf("no endpoint: error %v, want one naming ROCKETMQ_ENDPOINT", err)
	}
}

// TestDLQToName checks how --to is read for each transport: a name as it
// is, a URL of the source's transport as the name it carries.
func TestDLQToName(t *testing.T) {
	o := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "x:1"})
	target := func(arg string) *transport.Target {
		tg, err := o.Resolve(arg)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	sqsT, pubsubT := target("sqs://orders-dlq"), target("pubsub://projects/demo/subscriptions/orders-dlq")
	rmqT, memT := target("rocketmq://%DLQ%orders?group=g"), target("memory://orders-dlq?file=out.jsonl")
	for _, c := range []struct {
		t        *transport.Target
		to, want string
	}{
		{sqsT, "orders", "orders"},
		{sqsT, "sqs://orders", "orders"},
		{pubsubT, "pubsub://projects/demo/topics/orders", "orders"},
		{pubsubT, "pubsub://projects/other/topics/orders", "projects/other/topics/orders"},
		{pubsubT, "projects/other/topics/orders", "projects/other/topics/orders"},
		{rmqT, "rocketmq://orders", "orders"},
		{rmqT, "rocketmq://%25DLQ%25other", "%DLQ%other"},
		{rmqT, "rocketmq://%DLQ%other", "%DLQ%other"},
		{memT, "memory://orders", "orders"},
		{memT, "memory://orders?file=./out.jsonl", "orders"},
	} {
		got, err := ToName(c.t, o.Transports[c.t.S.Transport], c.to)
		if err != nil || got != c.want {
			t.Errorf("--to %s from %s: %q, %v; want %q", c.to, c.t.URL, got, err, c.want)
		}
	}
}

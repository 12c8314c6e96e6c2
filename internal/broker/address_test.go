package broker_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/sqs"
)

// Each transport's URLScheme is a broker.AddressScheme.
var (
	_ broker.AddressScheme = sqs.URLScheme{}
	_ broker.AddressScheme = gcp.URLScheme{}
	_ broker.AddressScheme = rocketmq.URLScheme{}
	_ broker.AddressScheme = memory.URLScheme{}
)

// TestAddressSchemes_ParseFormat: each transport's URL scheme
// parses its forms, prints what it parsed back to the same URL, and refuses
// what it cannot carry with a message naming its form.
func TestAddressSchemes_ParseFormat(t *testing.T) {
	for _, c := range []struct {
		as   broker.AddressScheme
		raw  string
		want broker.Address
	}{
		{sqs.URLScheme{}, "sqs://orders-dlq", broker.Address{Kind: broker.AddressQueue, Name: "orders-dlq"}},
		{sqs.URLScheme{}, "sqs://orders.fifo", broker.Address{Kind: broker.AddressQueue, Name: "orders.fifo", FIFO: true}},
		{sqs.URLScheme{}, "sqs://orders-fifo", broker.Address{Kind: broker.AddressQueue, Name: "orders-fifo"}},
		{gcp.URLScheme{}, "pubsub://projects/p1/subscriptions/orders-dlq", broker.Address{Project: "p1", Kind: broker.AddressSubscription, Name: "orders-dlq"}},
		{gcp.URLScheme{}, "pubsub://projects/p1/topics/orders", broker.Address{Project: "p1", Kind: broker.AddressTopic, Name: "orders"}},
		{rocketmq.URLScheme{}, "rocketmq://%DLQ%orders?group=g", broker.Address{Kind: broker.AddressTopic, Name: "%DLQ%orders", Params: url.Values{"group": {"g"}}}},
		{rocketmq.URLScheme{}, "rocketmq://orders", broker.Address{Kind: broker.AddressTopic, Name: "orders", Params: url.Values{}}},
		{memory.URLScheme{}, "memory://orders-dlq?file=out.jsonl", broker.Address{Kind: broker.AddressQueue, Name: "orders-dlq", Params: url.Values{"file": {"out.jsonl"}}}},
		// A file path is read as written: "+" is a plus sign; a space,
		// "#" and "&" are escaped (%20, %23, %26) and decoded.
		{memory.URLScheme{}, "memory://orders-dlq?file=/tmp/dead+letters%20%231%26a.jsonl", broker.Address{Kind: broker.AddressQueue, Name: "orders-dlq", Params: url.Values{"file": {"/tmp/dead+letters #1&a.jsonl"}}}},
	} {
		got, err := c.as.Parse(c.raw)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.raw, got, err, c.want)
			continue
		}
		if !strings.HasPrefix(c.raw, c.as.Forms().Scheme+"://") {
			t.Errorf("%s: scheme %q", c.raw, c.as.Forms().Scheme)
		}
		if f := c.as.Format(got); f != c.raw {
			t.Errorf("Format(Parse(%s)) = %s", c.raw, f)
		}
	}
	for _, c := range []struct {
		as       broker.AddressScheme
		raw, err string
	}{
		{sqs.URLScheme{}, "sqs://orders?region=x", "takes no query"},
		{sqs.URLScheme{}, "sqs://host/123/orders", "not a queue URL"},
		{sqs.URLScheme{}, "sqs://", "names no queue"},
		{gcp.URLScheme{}, "pubsub://projects/p/subscriptions/s?x=1", "takes no query"},
		{gcp.URLScheme{}, "pubsub://orders", "not a pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION"},
		{rocketmq.URLScheme{}, "rocketmq://orders?tag=x", `unknown query parameter "tag"`},
		{rocketmq.URLScheme{}, "rocketmq://", "names no topic"},
		{memory.URLScheme{}, "memory://q?x=1", `unknown query parameter "x"`},
		{memory.URLScheme{}, "memory://?file=f", "names no queue"},
		{memory.URLScheme{}, "memory://q?file=50%.jsonl", `query parameter "file" holds a "%" that starts no escape`},
	} {
		if _, err := c.as.Parse(c.raw); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want an error containing %q", c.raw, err, c.err)
		}
	}
}

// Destinations read by a replay, as each transport's dlq support gives
// them to PublishName and Same.
var (
	sqsQueue = broker.Address{Kind: broker.AddressQueue, Name: "orders-dlq"}
	sqsFIFO  = broker.Address{Kind: broker.AddressQueue, Name: "orders-dlq", FIFO: true}
	sqsSNS   = broker.Address{Kind: broker.AddressTopic, Name: "orders-dlq"}
	psTopic  = broker.Address{Project: "p1", Kind: broker.AddressTopic, Name: "orders-dlq"}
	rmqDLQ   = broker.Address{Kind: broker.AddressTopic, Name: rocketmq.DLQTopic("orders")}
	memQueue = broker.Address{Kind: broker.AddressQueue, Name: "orders-dlq", Params: url.Values{"file": {"out.jsonl"}}}
)

// long is a name longer than any broker takes (SQS 80, Pub/Sub 255).
var long = strings.Repeat("n", 300)

// TestAddressSchemes_PublishName: each transport resolves a
// replay's --to as its producer does: a name as it is (however long: the
// broker judges it), a URL of its scheme as the destination it names.
// Hostile input is refused with a message saying what the scheme takes:
// no name, a query the scheme cannot carry, a URL of another scheme, SQS
// a URL through SNS (which names topics), Pub/Sub a subscription,
// RocketMQ a consumer group, memory another file.
func TestAddressSchemes_PublishName(t *testing.T) {
	schemes := []broker.AddressScheme{sqs.URLScheme{}, gcp.URLScheme{}, rocketmq.URLScheme{}, memory.URLScheme{}}
	froms := []broker.Address{sqsQueue, psTopic, rmqDLQ, memQueue}
	for i, as := range schemes {
		for _, to := range []string{"", " ", "\t\n"} {
			if got, err := as.PublishName(to, froms[i]); err == nil || !strings.Contains(err.Error(), "names no destination") {
				t.Errorf("%s PublishName(%q) = %q, %v; want it refused", as.Forms().Scheme, to, got, err)
			}
		}
		for _, to := range []string{"orders", "orders.dlq", "orders.fifo", "orders?x=1", long} {
			if got, err := as.PublishName(to, froms[i]); err != nil || got != to {
				t.Errorf("%s PublishName(%q) = %q, %v; want the name as it is", as.Forms().Scheme, to, got, err)
			}
		}
	}
	for _, c := range []struct {
		as   broker.AddressScheme
		from broker.Address
		to   string
		want string // the name; or, after "error: ", what the error says
	}{
		{sqs.URLScheme{}, sqsQueue, "sqs://orders", "orders"},
		{sqs.URLScheme{}, sqsFIFO, "sqs://orders.fifo", "orders.fifo"},
		{sqs.URLScheme{}, sqsQueue, "sqs://" + long[:80], long[:80]},
		{sqs.URLScheme{}, sqsQueue, "sqs://" + long[:81], "error: an SQS queue name is at most 80 characters; this one would be 81 (brighter does not cut names short)"},
		{sqs.URLScheme{}, sqsFIFO, "sqs://" + long[:76] + ".fifo", "error: is at most 80 characters with \".fifo\"; this one would be 81"},
		{sqs.URLScheme{}, sqsSNS, "orders", "orders"},
		{sqs.URLScheme{}, sqsSNS, "sqs://orders", "error: replays from sqs://orders-dlq are published to SNS topics, and an sqs:// URL names a queue"},
		{sqs.URLScheme{}, sqsQueue, "sqs://orders?region=eu-west-1", "error: takes no query"},
		{sqs.URLScheme{}, sqsQueue, "sqs://orders?", "error: takes no query"},
		{sqs.URLScheme{}, sqsQueue, "sqs://orders#x", "error: a queue name alone"},
		{sqs.URLScheme{}, sqsQueue, "sqs://user@orders", "error: a queue name alone"},
		{sqs.URLScheme{}, sqsQueue, "sqs://orders:443", "error: a queue name alone"},
		{sqs.URLScheme{}, sqsQueue, "sqs://sqs.eu-west-1.amazonaws.com/123/orders", "error: not a queue URL"},
		{sqs.URLScheme{}, sqsQueue, "sqs://", "error: names no queue"},
		{sqs.URLScheme{}, sqsQueue, "sqs:///", "error: names no queue"},
		{sqs.URLScheme{}, sqsQueue, "sqs://%zz", "error: invalid URL escape"},
		{sqs.URLScheme{}, sqsQueue, "pubsub://projects/p/topics/t", "error: want sqs://QUEUE"},

		{gcp.URLScheme{}, psTopic, "projects/p2/topics/orders", "projects/p2/topics/orders"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p1/topics/orders", "orders"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p2/topics/orders", "projects/p2/topics/orders"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p1/topics/orders.fifo", "orders.fifo"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p1/topics/" + long, long},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p1/subscriptions/orders", "error: a replay publishes to a topic: want pubsub://projects/PROJECT/topics/TOPIC"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p1/topics/orders?x=1", "error: takes no query"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p1/topics/orders?", "error: takes no query"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p1/topics/", "error: not a pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects//topics/orders", "error: not a pubsub://"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p1/queues/orders", "error: not a pubsub://"},
		{gcp.URLScheme{}, psTopic, "pubsub://projects/p1/topics/a/b", "error: not a pubsub://"},
		{gcp.URLScheme{}, psTopic, "pubsub://orders", "error: not a pubsub://"},
		{gcp.URLScheme{}, psTopic, "sqs://orders", "error: not a pubsub://"},

		{rocketmq.URLScheme{}, rmqDLQ, "rocketmq://orders", "orders"},
		{rocketmq.URLScheme{}, rmqDLQ, "rocketmq://%DLQ%other", "%DLQ%other"},
		{rocketmq.URLScheme{}, rmqDLQ, "rocketmq://%25DLQ%25other", "%DLQ%other"},
		{rocketmq.URLScheme{}, rmqDLQ, "rocketmq://" + long, long},
		{rocketmq.URLScheme{}, rmqDLQ, "rocketmq://orders?group=g", "error: a publish has no consumer group: want rocketmq://TOPIC"},
		{rocketmq.URLScheme{}, rmqDLQ, "rocketmq://orders?tag=x", `error: unknown query parameter "tag"`},
		{rocketmq.URLScheme{}, rmqDLQ, "rocketmq://orders?group=%zz", "error: a rocketmq:// URL's query (?group=%zz) does not parse"},
		{rocketmq.URLScheme{}, rmqDLQ, "rocketmq://", "error: names no topic"},
		{rocketmq.URLScheme{}, rmqDLQ, "rocketmq://?group=g", "error: names no topic"},
		{rocketmq.URLScheme{}, rmqDLQ, "sqs://orders", "error: not a rocketmq:// URL"},

		{memory.URLScheme{}, memQueue, "memory://orders", "orders"},
		{memory.URLScheme{}, memQueue, "memory://orders?file=out.jsonl", "orders"},
		{memory.URLScheme{}, memQueue, "memory://orders?file=./out.jsonl", "orders"},
		{memory.URLScheme{}, memQueue, "memory://" + long, long},
		{memory.URLScheme{}, memQueue, "memory://orders?file=other.jsonl", "error: a replay writes only into the file it reads (out.jsonl)"},
		{memory.URLScheme{}, memQueue, "memory://orders?file=../out.jsonl", "error: a replay writes only into the file it reads"},
		{memory.URLScheme{}, memQueue, "memory://orders?x=1", `error: unknown query parameter "x"`},
		{memory.URLScheme{}, memQueue, "memory://?file=out.jsonl", "error: names no queue"},
		{memory.URLScheme{}, memQueue, "rocketmq://orders", "error: want memory://QUEUE?file=PATH"},
	} {
		got, err := c.as.PublishName(c.to, c.from)
		wantErr, refused := strings.CutPrefix(c.want, "error: ")
		switch {
		case refused && (err == nil || !strings.Contains(err.Error(), wantErr) || got != ""):
			t.Errorf("%s PublishName(%q, %+v) = %q, %v; want an error containing %q", c.as.Forms().Scheme, c.to, c.from, got, err, wantErr)
		case !refused && (err != nil || got != c.want):
			t.Errorf("%s PublishName(%q, %+v) = %q, %v; want %q", c.as.Forms().Scheme, c.to, c.from, got, err, c.want)
		}
	}
}

// TestAddressSchemes_SameComparesAsEachTransportResolvesNames: each transport
// compares a replay's destination with the one read as it resolves names. SQS
// applies QueueName to both (dots are underscores, a FIFO name ends in .fifo,
// no name is cut: a name over 80 characters is another queue than its first
// 80); Pub/Sub takes a topic id as the topic of self's project; RocketMQ and
// memory compare names as written, however long.
func TestAddressSchemes_SameComparesAsEachTransportResolvesNames(t *testing.T) {
	sqsName := func(name string, fifo bool) broker.Address {
		return broker.Address{Kind: broker.AddressQueue, Name: name, FIFO: fifo}
	}
	for _, c := range []struct {
		as   broker.AddressScheme
		name string
		self broker.Address
		want bool
	}{
		{sqs.URLScheme{}, "orders-dlq", sqsQueue, true},
		{sqs.URLScheme{}, "orders.dlq", sqsName("orders_dlq", false), true},
		{sqs.URLScheme{}, "orders_dlq", sqsName("orders.dlq", false), true},
		{sqs.URLScheme{}, "orders-dlq2", sqsQueue, false},
		{sqs.URLScheme{}, "", sqsQueue, false},
		{sqs.URLScheme{}, "orders-dlq", sqsName("orders-dlq.fifo", true), true},
		{sqs.URLScheme{}, "orders-dlq.fifo", sqsFIFO, true},
		{sqs.URLScheme{}, "orders-dlq_fifo", sqsFIFO, true},
		{sqs.URLScheme{}, "orders-dlq.fifo", sqsQueue, false},
		{sqs.URLScheme{}, "orders-dlq", sqsName("orders-dlq.fifo", false), false},
		{sqs.URLScheme{}, long, sqsName(long[:80], false), false},
		{sqs.URLScheme{}, long[:80] + "x", sqsName(long[:80]+"y", false), false},
		{sqs.URLScheme{}, long + ".x", sqsName(long+"_x", false), true},
		{sqs.URLScheme{}, long, sqsName(long[:75]+".fifo", true), false},
		{sqs.URLScheme{}, long, sqsName(long+".fifo", true), true},
		{sqs.URLScheme{}, "orders.dlq", broker.Address{Kind: broker.AddressTopic, Name: "orders_dlq"}, true},

		{gcp.URLScheme{}, "orders-dlq", psTopic, true},
		{gcp.URLScheme{}, "projects/p1/topics/orders-dlq", psTopic, true},
		{gcp.URLScheme{}, "orders-dlq", broker.Address{Project: "p1", Name: "projects/p1/topics/orders-dlq"}, true},
		{gcp.URLScheme{}, "projects/p2/topics/orders-dlq", psTopic, false},
		{gcp.URLScheme{}, "orders-dlq", broker.Address{Project: "p2", Name: "projects/p1/topics/orders-dlq"}, false},
		{gcp.URLScheme{}, "orders_dlq", psTopic, false},
		{gcp.URLScheme{}, "", psTopic, false},
		{gcp.URLScheme{}, long + "a", broker.Address{Project: "p1", Name: long + "b"}, false},

		{rocketmq.URLScheme{}, "%DLQ%orders", rmqDLQ, true},
		{rocketmq.URLScheme{}, "%25DLQ%25orders", rmqDLQ, false},
		{rocketmq.URLScheme{}, "orders", rmqDLQ, false},
		{rocketmq.URLScheme{}, "", rmqDLQ, false},
		{rocketmq.URLScheme{}, long + "a", broker.Address{Name: long + "b"}, false},

		{memory.URLScheme{}, "orders-dlq", memQueue, true},
		{memory.URLScheme{}, "orders_dlq", memQueue, false},
		{memory.URLScheme{}, "", memQueue, false},
		{memory.URLScheme{}, long + "a", broker.Address{Name: long + "b"}, false},
	} {
		if got := c.as.Same(c.name, c.self); got != c.want {
			t.Errorf("%s Same(%q, %+v) = %v, want %v", c.as.Forms().Scheme, c.name, c.self, got, c.want)
		}
	}
}

// TestPubSubScheme_FormatFullName: a subscription or topic given
// by its full name prints as that name behind pubsub://.
func TestPubSubScheme_FormatFullName(t *testing.T) {
	for _, c := range []struct {
		a    broker.Address
		want string
	}{
		{broker.Address{Project: "p1", Kind: broker.AddressSubscription, Name: "projects/p2/subscriptions/s"}, "pubsub://projects/p2/subscriptions/s"},
		{broker.Address{Project: "p1", Kind: broker.AddressTopic, Name: "projects/p2/topics/t"}, "pubsub://projects/p2/topics/t"},
		{broker.Address{Project: "p1", Kind: broker.AddressTopic, Name: "t"}, "pubsub://projects/p1/topics/t"},
	} {
		if got := (gcp.URLScheme{}).Format(c.a); got != c.want {
			t.Errorf("Format(%+v) = %s, want %s", c.a, got, c.want)
		}
	}
}

// TestURLHelpers: the helpers the schemes share split, parse and
// print URLs as the schemes need.
func TestURLHelpers(t *testing.T) {
	path, query, has, err := broker.SplitURL("x:///a/b/?q=1?r", "x", "x://A")
	if path != "a/b" || query != "q=1?r" || !has || err != nil {
		t.Errorf("SplitURL: %q %q %v %v", path, query, has, err)
	}
	if _, _, _, err := broker.SplitURL("y://a", "x", "x://A"); err == nil || err.Error() != "not a x:// URL: want x://A" {
		t.Errorf("SplitURL of another scheme: %v", err)
	}
	if _, err := broker.ParseURL("y://a", "x", "x://A"); err == nil || err.Error() != "want x://A" {
		t.Errorf("ParseURL of another scheme: %v", err)
	}
	for _, c := range []struct{ name, value, want string }{
		{"q", "", "x://q"},
		{"q", "a b&c", "x://q?k=a+b%26c"},
	} {
		if got := broker.FormatURL("x", c.name, "k", c.value); got != c.want {
			t.Errorf("FormatURL(%q, %q) = %q, want %q", c.name, c.value, got, c.want)
		}
	}
	if a, isURL, err := broker.ParsePublish(memory.URLScheme{}, "q?file=f"); a.Name != "q?file=f" || isURL || err != nil {
		t.Errorf("ParsePublish of a name: %+v %v %v", a, isURL, err)
	}
}

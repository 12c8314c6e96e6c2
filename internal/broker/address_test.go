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

// TestAddressSchemes_ParseFormat_Issue17: each transport's URL scheme
// parses its forms, prints what it parsed back to the same URL, and refuses
// what it cannot carry with a message naming its form.
func TestAddressSchemes_ParseFormat_Issue17(t *testing.T) {
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
	} {
		if _, err := c.as.Parse(c.raw); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want an error containing %q", c.raw, err, c.err)
		}
	}
}

// publishCase is one --to resolved by a scheme's PublishName against a
// replay reading from: the name it must return, or (err != "") an error
// containing err.
type publishCase struct {
	to        string
	from      broker.Address
	want, err string
}

func checkPublish(t *testing.T, as broker.AddressScheme, cases []publishCase) {
	t.Helper()
	for _, c := range cases {
		got, err := as.PublishName(c.to, c.from)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s PublishName(%q, %+v) = %q, %v; want %q", as.Forms().Scheme, c.to, c.from, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || got != ""):
			t.Errorf("%s PublishName(%q, %+v) = %q, %v; want an error containing %q", as.Forms().Scheme, c.to, c.from, got, err, c.err)
		}
	}
}

// sameCase is one name compared by a scheme's Same with the destination
// a replay reads.
type sameCase struct {
	name string
	self broker.Address
	want bool
}

func checkSame(t *testing.T, as broker.AddressScheme, cases []sameCase) {
	t.Helper()
	for _, c := range cases {
		if got := as.Same(c.name, c.self); got != c.want {
			t.Errorf("%s Same(%q, %+v) = %v, want %v", as.Forms().Scheme, c.name, c.self, got, c.want)
		}
	}
}

// Hostile names every scheme must refuse as a replay's --to: nothing, only
// blanks.
var emptyNames = []string{"", " ", "\t\n"}

func refuseEmpty(from broker.Address) []publishCase {
	var cs []publishCase
	for _, n := range emptyNames {
		cs = append(cs, publishCase{to: n, from: from, err: "names no destination"})
	}
	return cs
}

// TestSQSScheme_PublishNameSame_Issue17: SQS resolves a replay's --to as
// its producer does (a name as it is, sqs://QUEUE as QUEUE, no URL through
// SNS) and compares names as QueueName makes them: dots are underscores, a
// FIFO name ends in .fifo, names are cut at 80 characters.
func TestSQSScheme_PublishNameSame_Issue17(t *testing.T) {
	as := sqs.URLScheme{}
	queue := broker.Address{Kind: broker.AddressQueue, Name: "orders-dlq"}
	fifo := broker.Address{Kind: broker.AddressQueue, Name: "orders-dlq", FIFO: true}
	sns := broker.Address{Kind: broker.AddressTopic, Name: "orders-dlq"}
	long := strings.Repeat("q", 200)
	checkPublish(t, as, append(refuseEmpty(queue), []publishCase{
		{to: "orders", from: queue, want: "orders"},
		{to: "orders.dlq", from: queue, want: "orders.dlq"},
		{to: "sqs://orders", from: queue, want: "orders"},
		{to: "sqs://orders.fifo", from: fifo, want: "orders.fifo"},
		{to: "sqs://" + long, from: queue, want: long},
		{to: long, from: queue, want: long},
		{to: "orders", from: sns, want: "orders"},
		{to: "sqs://orders", from: sns, err: "replays from sqs://orders-dlq are published to SNS topics, and an sqs:// URL names a queue"},
		{to: "sqs://orders?region=eu-west-1", from: queue, err: "takes no query"},
		{to: "sqs://orders?", from: queue, err: "takes no query"},
		{to: "sqs://orders#x", from: queue, err: "a queue name alone"},
		{to: "sqs://user@orders", from: queue, err: "a queue name alone"},
		{to: "sqs://orders:443", from: queue, err: "a queue name alone"},
		{to: "sqs://sqs.eu-west-1.amazonaws.com/123/orders", from: queue, err: "not a queue URL"},
		{to: "sqs://", from: queue, err: "names no queue"},
		{to: "sqs:///", from: queue, err: "names no queue"},
		{to: "pubsub://projects/p/topics/t", from: queue, err: "want sqs://QUEUE"},
		{to: "sqs://%zz", from: queue, err: "invalid URL escape"},
	}...))
	checkSame(t, as, []sameCase{
		{"orders-dlq", queue, true},
		{"orders.dlq", broker.Address{Name: "orders_dlq"}, true},
		{"orders_dlq", broker.Address{Name: "orders.dlq"}, true},
		{"orders-dlq2", queue, false},
		{"", queue, false},
		// FIFO: the suffix is added, or kept, by QueueName on both sides.
		{"orders-dlq", broker.Address{Name: "orders-dlq.fifo", FIFO: true}, true},
		{"orders-dlq.fifo", fifo, true},
		{"orders-dlq_fifo", fifo, true},
		{"orders-dlq.fifo", queue, false},
		{"orders-dlq", broker.Address{Name: "orders-dlq.fifo"}, false},
		// Cut at 80 characters (75 and .fifo): longer names alike up to
		// there are one queue on SQS.
		{long, broker.Address{Name: long[:80]}, true},
		{long + "x", broker.Address{Name: long + "y"}, true},
		{long[:79] + "x", broker.Address{Name: long[:79] + "y"}, false},
		{long, broker.Address{Name: long[:75] + ".fifo", FIFO: true}, true},
		{long[:74] + "x", broker.Address{Name: long[:74] + "y", FIFO: true}, false},
		// Through SNS, names compare the same way.
		{"orders.dlq", broker.Address{Kind: broker.AddressTopic, Name: "orders_dlq"}, true},
	})
}

// TestPubSubScheme_PublishNameSame_Issue17: Pub/Sub resolves --to to a
// topic of the project read (its id) or of another (its full name),
// refuses a subscription, and compares a topic id with a full name.
func TestPubSubScheme_PublishNameSame_Issue17(t *testing.T) {
	as := gcp.URLScheme{}
	from := broker.Address{Project: "p1", Kind: broker.AddressTopic, Name: "orders-dlq"}
	long := strings.Repeat("t", 300)
	checkPublish(t, as, append(refuseEmpty(from), []publishCase{
		{to: "orders", from: from, want: "orders"},
		{to: "projects/p2/topics/orders", from: from, want: "projects/p2/topics/orders"},
		{to: "pubsub://projects/p1/topics/orders", from: from, want: "orders"},
		{to: "pubsub://projects/p2/topics/orders", from: from, want: "projects/p2/topics/orders"},
		{to: "pubsub://projects/p1/topics/orders.fifo", from: from, want: "orders.fifo"},
		{to: "pubsub://projects/p1/topics/" + long, from: from, want: long},
		{to: "pubsub://projects/p1/subscriptions/orders", from: from, err: "a replay publishes to a topic: want pubsub://projects/PROJECT/topics/TOPIC"},
		{to: "pubsub://projects/p1/topics/orders?x=1", from: from, err: "takes no query"},
		{to: "pubsub://projects/p1/topics/orders?", from: from, err: "takes no query"},
		{to: "pubsub://projects/p1/topics/", from: from, err: "not a pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION"},
		{to: "pubsub://projects//topics/orders", from: from, err: "not a pubsub://"},
		{to: "pubsub://projects/p1/queues/orders", from: from, err: "not a pubsub://"},
		{to: "pubsub://projects/p1/topics/a/b", from: from, err: "not a pubsub://"},
		{to: "pubsub://orders", from: from, err: "not a pubsub://"},
		{to: "sqs://orders", from: from, err: "not a pubsub://"},
	}...))
	checkSame(t, as, []sameCase{
		{"orders-dlq", from, true},
		{"projects/p1/topics/orders-dlq", from, true},
		{"orders-dlq", broker.Address{Project: "p1", Name: "projects/p1/topics/orders-dlq"}, true},
		{"projects/p2/topics/orders-dlq", from, false},
		{"orders-dlq", broker.Address{Project: "p2", Name: "projects/p1/topics/orders-dlq"}, false},
		{"orders_dlq", from, false},
		{"", from, false},
		{long + "a", broker.Address{Project: "p1", Name: long + "b"}, false},
	})
}

// TestRocketMQScheme_PublishNameSame_Issue17: RocketMQ resolves --to to
// the topic a rocketmq://TOPIC URL names (raw or escaped), refuses a
// consumer group or any other query, and compares topics as written.
func TestRocketMQScheme_PublishNameSame_Issue17(t *testing.T) {
	as := rocketmq.URLScheme{}
	from := broker.Address{Kind: broker.AddressTopic, Name: rocketmq.DLQTopic("orders")}
	long := strings.Repeat("t", 300)
	checkPublish(t, as, append(refuseEmpty(from), []publishCase{
		{to: "orders", from: from, want: "orders"},
		{to: "rocketmq://orders", from: from, want: "orders"},
		{to: "rocketmq://%DLQ%other", from: from, want: "%DLQ%other"},
		{to: "rocketmq://%25DLQ%25other", from: from, want: "%DLQ%other"},
		{to: "rocketmq://orders.fifo", from: from, want: "orders.fifo"},
		{to: "rocketmq://" + long, from: from, want: long},
		{to: "rocketmq://orders?group=g", from: from, err: "a publish has no consumer group: want rocketmq://TOPIC"},
		{to: "rocketmq://orders?tag=x", from: from, err: `unknown query parameter "tag"`},
		{to: "rocketmq://orders?group=%zz", from: from, err: "invalid URL escape"},
		{to: "rocketmq://", from: from, err: "names no topic"},
		{to: "rocketmq://?group=g", from: from, err: "names no topic"},
		{to: "sqs://orders", from: from, err: "not a rocketmq:// URL"},
	}...))
	checkSame(t, as, []sameCase{
		{"%DLQ%orders", from, true},
		{"%25DLQ%25orders", from, false},
		{"orders", from, false},
		{"", from, false},
		{long + "a", broker.Address{Name: long + "b"}, false},
	})
}

// TestMemoryScheme_PublishNameSame_Issue17: the memory transport resolves
// --to to the queue a memory://QUEUE URL names, in the file being read
// only, and compares queues as written.
func TestMemoryScheme_PublishNameSame_Issue17(t *testing.T) {
	as := memory.URLScheme{}
	from := broker.Address{Kind: broker.AddressQueue, Name: "orders-dlq", Params: url.Values{"file": {"out.jsonl"}}}
	long := strings.Repeat("q", 300)
	checkPublish(t, as, append(refuseEmpty(from), []publishCase{
		{to: "orders", from: from, want: "orders"},
		{to: "memory://orders", from: from, want: "orders"},
		{to: "memory://orders?file=out.jsonl", from: from, want: "orders"},
		{to: "memory://orders?file=./out.jsonl", from: from, want: "orders"},
		{to: "memory://orders.fifo", from: from, want: "orders.fifo"},
		{to: "memory://" + long, from: from, want: long},
		{to: "memory://orders?file=other.jsonl", from: from, err: "a replay writes only into the file it reads (out.jsonl)"},
		{to: "memory://orders?file=../out.jsonl", from: from, err: "a replay writes only into the file it reads"},
		{to: "memory://orders?x=1", from: from, err: `unknown query parameter "x"`},
		{to: "memory://?file=out.jsonl", from: from, err: "names no queue"},
		{to: "rocketmq://orders", from: from, err: "want memory://QUEUE?file=PATH"},
	}...))
	checkSame(t, as, []sameCase{
		{"orders-dlq", from, true},
		{"orders_dlq", from, false},
		{"", from, false},
		{long + "a", broker.Address{Name: long + "b"}, false},
	})
}

// TestURLHelpers_Issue17: the helpers the schemes share split, parse and
// print URLs as the schemes need.
func TestURLHelpers_Issue17(t *testing.T) {
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

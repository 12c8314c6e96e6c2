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
		{sqs.URLScheme{}, "sqs://orders.fifo", broker.Address{Kind: broker.AddressQueue, Name: "orders.fifo"}},
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

package live_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/live"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// TestRocketMQGroupMaximum: `lint --live` reads each RocketMQ
// consumer group's broker-side maximum delivery attempts from the RocketMQ test
// broker (driven by the real client library's connection and signing) and
// reports a group whose maximum is below the file's budget
// (budget-outranked) and differs from rocketmq.maxDeliveryAttempts
// (native-limit-drift); a group that agrees gives nothing; a proxy that does
// not report the maximum is a live-check-failed finding that says so.
func TestRocketMQGroupMaximum(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rocketmq.ConfigureClientLog(t.TempDir())
	srv, err := rmqtest.Start(rmqtest.Options{})
	if err != nil {
		t.Fatalf("start the RocketMQ test broker: %v", err)
	}
	t.Cleanup(srv.Close)
	srv.CreateTopic("orders")
	srv.CreateTopic("refunds")
	srv.SetMaxDeliveryAttempts("brighter-orders", 3) // an operator lowered it

	f := parse(t, fmt.Sprintf(`connections:
  rocketmq: {endpoint: %q, accessKey: ak, secretKey: sk}
subscriptions:
  - name: orders
    transport: rocketmq
    channelName: orders
    requeueCount: 5
    deadLetterRoutingKey: orders-dlq
    handler: {type: builtin, name: defer}
    rocketmq: {consumerGroup: brighter-orders}
  - name: refunds
    transport: rocketmq
    channelName: refunds
    requeueCount: 3
    deadLetterRoutingKey: refunds-dlq
    handler: {type: builtin, name: defer}
    rocketmq: {consumerGroup: brighter-refunds}
`, srv.Endpoint()))
	probers := map[config.Transport]live.Prober{config.TransportRocketMQ: live.RocketMQ{
		Connection: func(f *config.File) rocketmq.Connection {
			c := f.Connections.RocketMQ
			return rocketmq.Connection{Endpoint: c.Endpoint, AccessKey: c.AccessKey, SecretKey: c.SecretKey}
		},
	}}
	fs := live.Check(ctx, f, probers, rules.Default())
	if o := find(fs, "orders", lint.RuleBudgetOutranked); o == nil || !strings.Contains(o.Message, "requeueCount 5 >= rocketmq.maxDeliveryAttempts 3 on the broker") {
		t.Errorf("orders: the group's maximum delivery attempts, 3, are below the budget 5: budget-outranked = %+v%s", o, dump(fs))
	}
	if d := find(fs, "orders", lint.RuleNativeLimitDrift); d == nil || !strings.Contains(d.Message, "maxDeliveryAttempts 16 but the broker has 3") {
		t.Errorf("orders drift = %+v%s", d, dump(fs))
	}
	if len(fs) != 2 {
		t.Errorf("findings = %d, want 2 (refunds agrees with the broker's 16)%s", len(fs), dump(fs))
	}

	// A proxy that does not report the group's retry policy: lint says it
	// could not check, and does not guess.
	srv.HideGroupRetryPolicy(true)
	fs = live.Check(ctx, f, probers, rules.Default())
	for _, sub := range []string{"orders", "refunds"} {
		if g := find(fs, sub, lint.RuleLiveCheckFailed); g == nil || !strings.Contains(g.Message, "did not report consumer group brighter-"+sub+"'s maximum delivery attempts") {
			t.Errorf("%s with the retry policy not reported: live-check-failed = %+v%s", sub, g, dump(fs))
		}
	}
	if len(fs) != 2 {
		t.Errorf("findings = %d, want the 2 live-check-failed%s", len(fs), dump(fs))
	}
}

package consume_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestConsumeRocketMQRefusedCredentials: a RocketMQ broker that
// refuses the credentials (UNAUTHORIZED on the start-up route query, from
// rmqtest's fault hook) makes consume exit 1 at start-up with one error
// naming the endpoint and where it came from, instead of retrying: no pump
// starts, no channel failure is logged.
func TestConsumeRocketMQRefusedCredentials(t *testing.T) {
	t.Parallel()
	rocketmq.ConfigureClientLog(t.TempDir())
	srv, err := rmqtest.Start(rmqtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	srv.CreateTopic("orders")
	srv.FailQueryRoute(func(string, string) error {
		return &rmqtest.StatusError{Code: v2.Code_UNAUTHORIZED, Message: "signature does not match"}
	})
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := `connections:
  rocketmq:
    endpoint: ` + srv.Endpoint() + `
subscriptions:
  - name: orders
    transport: rocketmq
    channelName: orders
    makeChannels: assume
    handler: {type: builtin, name: ack}
    rocketmq:
      consumerGroup: g1
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	io, _, errOut := cmdtest.FakeIO("", false)
	code := run(ctx, io, []string{"consume", "--config", cfg})
	logs := errOut.String()
	if code != cmdutil.ExitFailure {
		t.Fatalf("consume exited %d, want %d; stderr:\n%s", code, cmdutil.ExitFailure, logs)
	}
	want := "at " + srv.Endpoint() + " (connections.rocketmq.endpoint in the subscriptions file): refused the credentials"
	if !strings.Contains(logs, want) || !strings.Contains(logs, "UNAUTHORIZED") {
		t.Fatalf("stderr lacks %q and the status:\n%s", want, logs)
	}
	if strings.Contains(logs, "channel failure") || strings.Contains(logs, "message pump started") {
		t.Fatalf("a pump ran:\n%s", logs)
	}
}

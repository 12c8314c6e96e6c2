package rules_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/rules"
	"github.com/brightergo/brighter/internal/transport"
)

// TestMain stops the Google Pub/Sub emulator the tests start.
func TestMain(m *testing.M) { os.Exit(gcptest.Main(m)) }

// TestGCPRetryPolicyRange_AgreesWithPubSub: gcp-retry-policy-range reports
// a subscription exactly when the Pub/Sub emulator refuses the retry policy
// makeChannels: create gives it, as consume opens it (the transport's Open,
// which consume calls once lint has passed the file): a requeueDelay or a
// gcp.maxRequeueDelay above 600s, or a requeueDelay above
// gcp.maxRequeueDelay, and nothing at the bounds.
func TestGCPRetryPolicyRange_AgreesWithPubSub(t *testing.T) {
	ctx := context.Background()
	_, srv := gcptest.Start(t, "retry", nil, gcp.Connect)
	cases := []struct {
		requeueDelay, maxRequeueDelay string
		refused                       bool
	}{
		{"10m", "", false},
		{"601s", "", true},
		{"30m", "", true},
		{"2m", "1m", true},
		{"1m", "1m", false},
		{"10s", "601s", true},
		{"10s", "10m", false},
		{"0s", "11m", false}, // no retry policy
		{"30m", "20m", true},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "connections:\n  gcp:\n    projectId: %s\n    emulatorHost: %s\nsubscriptions:\n", srv.Project, srv.Addr)
	for i, c := range cases {
		fmt.Fprintf(&b, "  - name: sub-%d\n    transport: gcp\n    routingKey: topic-%d\n    requeueCount: -1\n    requeueDelay: %s\n    handler: {type: builtin, name: ack}\n", i, i, c.requeueDelay)
		if c.maxRequeueDelay != "" {
			fmt.Fprintf(&b, "    gcp: {maxRequeueDelay: %s}\n", c.maxRequeueDelay)
		}
	}
	f, err := config.Parse("retry.yaml", []byte(b.String()), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	l := lint.New(rules.Default())
	reg := transport.Default()
	t.Cleanup(func() { reg.CloseClients(slog.New(slog.NewTextHandler(io.Discard, nil))) })
	tr, err := reg.Get(f.Subscriptions[0])
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i, s := range f.Subscriptions {
		c := cases[i]
		var found []lint.Finding
		for _, fd := range l.Subscription(s) {
			if fd.RuleID == lint.RuleGCPRetryPolicyRange {
				found = append(found, fd)
			}
		}
		ch, err := tr.Open(ctx, f, s, quiet)
		if err == nil {
			_ = ch.Close(ctx)
		}
		if (err != nil) != c.refused {
			t.Errorf("requeueDelay %s, maxRequeueDelay %q: Pub/Sub's answer %v, want refused %v", c.requeueDelay, c.maxRequeueDelay, err, c.refused)
		}
		if (len(found) > 0) != c.refused {
			t.Errorf("requeueDelay %s, maxRequeueDelay %q: lint's findings %+v, want one: %v", c.requeueDelay, c.maxRequeueDelay, found, c.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "InvalidArgument") {
			t.Errorf("requeueDelay %s, maxRequeueDelay %q: refused for another reason than the retry policy: %v", c.requeueDelay, c.maxRequeueDelay, err)
		}
	}
}

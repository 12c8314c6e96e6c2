package lint_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/lint"
)

// TestLintLive_SilentSQSEndpointGivesUpNamingIt runs `lint --live` on a
// file whose SQS endpoint (a listener of the test) accepts connections and
// never answers. Each format gives up within twice
// transport.LiveLookupTimeout, not at the end of --live-timeout (30s), so
// both subscriptions cost one look-up's deadline, not one each; each
// subscription's live-check-failed finding names the endpoint's URL, where
// it came from and the queue looked up; and the report says the lint did
// not complete, as an unreadable file does in every format (text: in place
// of its summary line; json: "incomplete" and no "summary"; sarif: an
// invocation that did not succeed).
func TestLintLive_SilentSQSEndpointGivesUpNamingIt(t *testing.T) {
	b := cmdtest.NewSilentBroker(t)
	// The SDK reads credentials from the environment, as in production.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDSILENTTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "silent-test-secret")
	path := filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := "connections:\n  aws:\n    region: us-east-1\n    endpoint: " + b.URL + "\nsubscriptions:\n"
	for _, q := range []string{"orders", "refunds"} {
		yaml += "  - name: " + q + "\n    transport: sqs\n    channelName: " + q + "-queue\n    routingKey: " + q +
			"\n    makeChannels: validate\n    handler: {type: builtin, name: ack}\n"
	}
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	const marker = "lint did not complete: --live could not check 2 subscription(s)"
	bound := 2 * 5 * time.Second
	for _, c := range []struct {
		format        string
		want, mustNot []string
	}{
		{"text", []string{marker}, []string{"no findings", "error,", "warning,"}},
		{"json", []string{`"incomplete": "--live could not check 2 subscription(s)`}, []string{`"summary"`}},
		{"sarif", []string{`"executionSuccessful": false`, marker}, nil},
	} {
		t.Run(c.format, func(t *testing.T) {
			io, out, errOut := cmdtest.FakeIO("", false)
			start := time.Now()
			run(context.Background(), io, []string{"lint", "--live", "-o", c.format, path})
			if took := time.Since(start); took > bound {
				t.Errorf("lint --live took %v on a silent endpoint, want at most %v", took, bound)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", w, out, errOut)
				}
			}
			for _, w := range c.mustNot {
				if strings.Contains(out.String(), w) {
					t.Errorf("stdout has %q:\n%s", w, out)
				}
			}
			if c.format != "json" {
				return
			}
			var rep struct {
				Findings []liveFinding `json:"findings"`
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			failed := map[string]bool{}
			for _, f := range rep.Findings {
				if f.Rule != lint.RuleLiveCheckFailed {
					continue
				}
				failed[f.Subscription] = true
				// The endpoint as the file gives it and where it came from,
				// and the queue looked up.
				for _, w := range []string{"SQS at " + b.URL + " (connections.aws.endpoint in the subscriptions file)", "queue " + f.Subscription + "-queue"} {
					if !strings.Contains(f.Message, w) {
						t.Errorf("finding of %s does not name %q: %s", f.Subscription, w, f.Message)
					}
				}
			}
			if !failed["orders"] || !failed["refunds"] {
				t.Errorf("live-check-failed for %v, want orders and refunds: %+v", failed, rep.Findings)
			}
		})
	}
}

package consume

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
)

// TestLogStartupFindings_NFR4 checks consume's start-up route: each
// finding is logged once per subscription and rule, budget findings at
// Warning, with the subscription, rule and requirement as attributes.
func TestLogStartupFindings_NFR4(t *testing.T) {
	data := `connections:
  gcp:
    projectId: demo
subscriptions:
  - name: orders
    transport: memory
    requeueCount: 0
    handler: {type: builtin, name: ack}
  - name: payments
    transport: gcp
    requeueCount: 3
    deadLetterRoutingKey: payments
    invalidMessageRoutingKey: payments
    handler: {type: builtin, name: ack}
  - name: clean
    transport: memory
    handler: {type: builtin, name: ack}
`
	f, err := config.Parse("brighter.yaml", []byte(data), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// The dead-letter-is-source Error refuses the start-up (exit 2) and
	// names the finding.
	err = logStartupFindings(logger, f, f.Subscriptions)
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "error dead-letter-is-source") {
		t.Errorf("logStartupFindings = %v, want a usage error (exit 2) naming dead-letter-is-source", err)
	}

	type rec struct {
		Level, Msg, Subscription, Rule, Requirement, Finding string
	}
	count := map[string]int{}
	levels := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r rec
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r.Msg != logLintFinding {
			t.Errorf("unexpected log message %q", r.Msg)
		}
		if !strings.Contains(r.Finding, `"`+r.Subscription+`"`) {
			t.Errorf("finding %q does not name subscription %s", r.Finding, r.Subscription)
		}
		if r.Rule == lint.RuleDeadLetterIsSource && (!strings.Contains(r.Finding, "deadLetterRoutingKey") || !strings.Contains(r.Finding, "invalidMessageRoutingKey")) {
			t.Errorf("the dead-letter-is-source record does not carry both fields: %q", r.Finding)
		}
		key := r.Subscription + "/" + r.Rule
		count[key]++
		levels[key] = r.Level
	}
	want := map[string]string{
		"orders/budget-zero":               "WARN",
		"orders/budget-no-dead-letter":     "WARN",
		"payments/budget-cannot-run-down":  "WARN",
		"payments/dead-letter-is-source":   "ERROR", // two fields, one record (once per rule)
		"payments/routing-no-native-limit": "WARN",
	}
	for key, level := range want {
		if count[key] != 1 || levels[key] != level {
			t.Errorf("%s: logged %d times at %s, want once at %s", key, count[key], levels[key], level)
		}
	}
	if len(count) != len(want) {
		t.Errorf("logged %v, want exactly %v", count, want)
	}
}

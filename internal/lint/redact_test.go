package lint_test

import (
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// TestFindings_QuoteExpandedValuesAsWritten: a finding that quotes
// a value that came from ${VAR} quotes it as written, never expanded.
func TestFindings_QuoteExpandedValuesAsWritten(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "Q" {
			return "orders-secret-queue", true
		}
		return "", false
	}
	yaml := header + "  - name: orders\n    transport: sqs\n    channelName: \"${Q}\"\n    deadLetterRoutingKey: \"${Q}\"\n    handler: {type: builtin, name: ack}\n"
	fs, _ := lint.New(rules.Default()).Source("brighter.yaml", []byte(yaml), env)
	got := only(fs, lint.RuleDeadLetterIsSource)
	if len(got) != 1 {
		t.Fatalf("want one %s finding:%s", lint.RuleDeadLetterIsSource, dump(fs))
	}
	for _, f := range fs {
		if strings.Contains(f.Message, "orders-secret-queue") {
			t.Errorf("finding shows the expanded value: %s", f.Message)
		}
	}
	if !strings.Contains(got[0].Message, `"${Q}"`) {
		t.Errorf("finding does not quote the value as written: %s", got[0].Message)
	}
}

package lint_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// header is prepended to every test file: connections every transport
// needs.
const header = `connections:
  gcp:
    projectId: demo
  rocketmq:
    endpoint: 127.0.0.1:8081
subscriptions:
`

// sub renders one subscription with the given extra lines (indented under
// the list item).
func sub(transport string, extra ...string) string {
	var b strings.Builder
	b.WriteString("  - name: orders\n    transport: " + transport + "\n")
	b.WriteString("    handler:\n      type: builtin\n      name: ack\n")
	for _, e := range extra {
		for _, l := range strings.Split(e, "\n") {
			b.WriteString("    " + l + "\n")
		}
	}
	if transport == "rocketmq" && !strings.Contains(b.String(), "rocketmq:") {
		b.WriteString("    rocketmq:\n      consumerGroup: g\n")
	}
	return b.String()
}

func lintYAML(t *testing.T, yaml string) []lint.Finding {
	t.Helper()
	fs, _ := lint.New(rules.Default()).Source("brighter.yaml", []byte(header+yaml), func(string) (string, bool) { return "", false })
	return fs
}

// only returns the findings of rule.
func only(fs []lint.Finding, rule string) []lint.Finding {
	var out []lint.Finding
	for _, f := range fs {
		if f.RuleID == rule {
			out = append(out, f)
		}
	}
	return out
}

func dump(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s: %s %s: %s", f.Pos, f.Severity, f.RuleID, f.Message)
	}
	return b.String()
}

// ruleCase is a file that trips rule (want findings) or not (want 0).
type ruleCase struct {
	name     string
	yaml     string
	want     int
	contains []string
	absent   []string // texts no finding of the rule may say
	severity lint.Severity
	line     int // 0: not checked
}

func runCases(t *testing.T, rule string, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			all := lintYAML(t, c.yaml)
			got := only(all, rule)
			if len(got) != c.want {
				t.Fatalf("%s findings = %d, want %d; all findings:%s", rule, len(got), c.want, dump(all))
			}
			for _, f := range got {
				if f.Severity != c.severity {
					t.Errorf("severity = %s, want %s", f.Severity, c.severity)
				}
				for _, s := range c.contains {
					if !strings.Contains(f.Message, s) {
						t.Errorf("message %q does not contain %q", f.Message, s)
					}
				}
				for _, s := range c.absent {
					if strings.Contains(f.Message, s) {
						t.Errorf("message %q says %q", f.Message, s)
					}
				}
				if c.line != 0 && f.Pos.Line != c.line {
					t.Errorf("line = %d, want %d (%s)", f.Pos.Line, c.line, f.Message)
				}
				if f.Pos.File != "brighter.yaml" || f.Pos.Column < 1 {
					t.Errorf("position %s: want brighter.yaml with a column", f.Pos)
				}
			}
		})
	}
}

// Line numbers: header is 6 lines; "- name" is line 7, transport 8, handler
// 9..11, extras from 12.

func TestBudgetZero_R7_AC7(t *testing.T) {
	runCases(t, lint.RuleBudgetZero, []ruleCase{
		{name: "zero trips", yaml: sub("memory", "requeueCount: 0", "deadLetterRoutingKey: dlq"), want: 1, severity: lint.SeverityWarning,
			contains: []string{`"orders"`, "requeueCount 0", "-1 (unlimited)", "1 (once only)"}, line: 12},
		{name: "below -1 trips", yaml: sub("sqs", "requeueCount: -3", "deadLetterRoutingKey: dlq"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"requeueCount -3"}},
		{name: "three does not trip", yaml: sub("memory", "requeueCount: 3", "deadLetterRoutingKey: dlq"), want: 0},
		{name: "minus one does not trip", yaml: sub("memory", "requeueCount: -1"), want: 0},
		{name: "default does not trip", yaml: sub("memory"), want: 0},
	})
}

func TestBudgetOutranked_R10_AC10(t *testing.T) {
	sqs := func(r, m int) string {
		return sub("sqs", fmt.Sprintf("requeueCount: %d", r), "deadLetterRoutingKey: dlq",
			fmt.Sprintf("sqs:\n  redrivePolicy:\n    deadLetterQueue: redrive\n    maxReceiveCount: %d", m))
	}
	runCases(t, lint.RuleBudgetOutranked, []ruleCase{
		{name: "sqs R5 M5 trips", yaml: sqs(5, 5), want: 1, severity: lint.SeverityWarning,
			contains: []string{`"orders"`, "requeueCount 5", "maxReceiveCount 5", "effective limit is 5"}, line: 12},
		{name: "sqs R7 M5 trips", yaml: sqs(7, 5), want: 1, severity: lint.SeverityWarning, contains: []string{"effective limit is 5"}},
		{name: "sqs R3 M5 does not trip", yaml: sqs(3, 5), want: 0},
		{name: "sqs no redrive does not trip", yaml: sub("sqs", "requeueCount: 50", "deadLetterRoutingKey: dlq"), want: 0},
		{name: "unlimited does not trip", yaml: sub("sqs", "requeueCount: -1", "sqs:\n  redrivePolicy:\n    deadLetterQueue: r\n    maxReceiveCount: 1"), want: 0},
		{name: "gcp R5 M5 trips", yaml: sub("gcp", "requeueCount: 5", "deadLetterRoutingKey: dlq", "gcp:\n  deadLetterPolicy:\n    topic: native\n    maxDeliveryAttempts: 5"),
			want: 1, severity: lint.SeverityWarning, contains: []string{"gcp.deadLetterPolicy.maxDeliveryAttempts 5"}},
		{name: "gcp R3 M5 does not trip", yaml: sub("gcp", "requeueCount: 3", "deadLetterRoutingKey: dlq", "gcp:\n  deadLetterPolicy:\n    topic: native\n    maxDeliveryAttempts: 5"), want: 0},
		// The file's 0 is Pub/Sub's default, 5, and is judged as 5.
		{name: "gcp R5 M0 trips as 5", yaml: sub("gcp", "requeueCount: 5", "deadLetterRoutingKey: dlq", "gcp:\n  deadLetterPolicy:\n    topic: native\n    maxDeliveryAttempts: 0"),
			want: 1, severity: lint.SeverityWarning, contains: []string{"gcp.deadLetterPolicy.maxDeliveryAttempts 5", "effective limit is 5"}},
		{name: "gcp R4 M0 does not trip", yaml: sub("gcp", "requeueCount: 4", "deadLetterRoutingKey: dlq", "gcp:\n  deadLetterPolicy:\n    topic: native\n    maxDeliveryAttempts: 0"), want: 0},
		{name: "rocketmq R16 default M16 trips", yaml: sub("rocketmq", "requeueCount: 16", "deadLetterRoutingKey: dlq"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"rocketmq.maxDeliveryAttempts 16"}},
		{name: "rocketmq R3 does not trip", yaml: sub("rocketmq", "requeueCount: 3", "deadLetterRoutingKey: dlq"), want: 0},
	})
}

// TestRestartsReachNativeLimit_R10: a native limit M above requeueCount R
// but at most 2 x R (the deliveries the budget forgives, then counts; the
// pump routes on delivery 2R + 1) trips, naming the limit, the delivery
// brighter routes on and the fix (M of at least 2R + 1); M = 2R + 1 does not
// (SQS hands a message out M times), nor does M <= R (budget-outranked's),
// nor no budget; a budget of 0 behaves as 1.
func TestRestartsReachNativeLimit_R10(t *testing.T) {
	sqs := func(r, m int) string {
		return sub("sqs", fmt.Sprintf("requeueCount: %d", r), "deadLetterRoutingKey: dlq",
			fmt.Sprintf("sqs:\n  redrivePolicy:\n    deadLetterQueue: redrive\n    maxReceiveCount: %d", m))
	}
	gcp := func(r, m int) string {
		return sub("gcp", fmt.Sprintf("requeueCount: %d", r), "deadLetterRoutingKey: dlq",
			fmt.Sprintf("gcp:\n  deadLetterPolicy:\n    topic: native\n    maxDeliveryAttempts: %d", m))
	}
	runCases(t, lint.RuleRestartsReachNativeLimit, []ruleCase{
		{name: "sqs R3 M5 trips (the old examples' layout)", yaml: sqs(3, 5), want: 1, severity: lint.SeverityWarning, line: 17,
			contains: []string{`"orders"`, "sqs.redrivePolicy.maxReceiveCount 5 is above requeueCount 3 but below 7 (2 x requeueCount + 1)",
				"forgives up to 3 deliveries that no handler finished", "only on delivery 7", "5 stops or crashes", "no rejection reason", "set maxReceiveCount to at least 7"}},
		{name: "sqs R3 M6 trips", yaml: sqs(3, 6), want: 1, severity: lint.SeverityWarning, contains: []string{"at least 7"}},
		{name: "sqs R3 M7 does not trip: delivery 7 reaches brighter", yaml: sqs(3, 7), want: 0},
		{name: "sqs R3 M4 trips", yaml: sqs(3, 4), want: 1, severity: lint.SeverityWarning},
		{name: "sqs R3 M3 is budget-outranked's", yaml: sqs(3, 3), want: 0},
		{name: "sqs R1 M2 trips", yaml: sqs(1, 2), want: 1, severity: lint.SeverityWarning, contains: []string{"below 3", "at least 3"}},
		{name: "sqs R1 M3 does not trip", yaml: sqs(1, 3), want: 0},
		{name: "no budget does not trip", yaml: sqs(-1, 2), want: 0},
		{name: "gcp R3 M5 trips", yaml: gcp(3, 5), want: 1, severity: lint.SeverityWarning, contains: []string{"gcp.deadLetterPolicy.maxDeliveryAttempts 5", "set maxDeliveryAttempts to at least 7"}},
		{name: "gcp R3 M0 trips as Pub/Sub's default 5", yaml: gcp(3, 0), want: 1, severity: lint.SeverityWarning, contains: []string{"maxDeliveryAttempts 5"}},
		{name: "gcp R2 M5 does not trip", yaml: gcp(2, 5), want: 0},
		{name: "rocketmq R7 default M16 does not trip", yaml: sub("rocketmq", "requeueCount: 7", "deadLetterRoutingKey: dlq"), want: 0},
		{name: "rocketmq R8 default M16 trips", yaml: sub("rocketmq", "requeueCount: 8", "deadLetterRoutingKey: dlq"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"rocketmq.maxDeliveryAttempts 16", "at least 17"}},
	})
}

// TestRequeueDelayLostAtStop_R4: a Pub/Sub stream subscription (gcp.mode
// stream, or no mode: stream is the default) whose requeueDelay is above
// the 9s its consumer keeps a hold through a stop trips, at requeueDelay,
// advising pull; 9s itself, pull mode and other transports do not.
func TestRequeueDelayLostAtStop_R4(t *testing.T) {
	gcp := func(mode, delay string) string {
		block := "gcp:\n  deadLetterPolicy:\n    topic: native\n    maxDeliveryAttempts: 10"
		if mode != "" {
			block += "\n  mode: " + mode
		}
		return sub("gcp", "requeueCount: 3", "requeueDelay: "+delay, "deadLetterRoutingKey: dlq", block)
	}
	runCases(t, lint.RuleRequeueDelayLostAtStop, []ruleCase{
		{name: "stream with 30s trips", yaml: gcp("stream", "30s"), want: 1, severity: lint.SeverityWarning, line: 13,
			contains: []string{`"orders"`, "gcp.mode stream with requeueDelay 30s", "longer than the 9s", "Nacked at once", "use gcp.mode: pull", "at most 9s"}},
		{name: "the default mode is stream", yaml: gcp("", "10s"), want: 1, severity: lint.SeverityWarning, contains: []string{"requeueDelay 10s"}},
		{name: "stream with 9s does not trip: the hold is kept", yaml: gcp("stream", "9s"), want: 0},
		{name: "stream with 9.5s trips", yaml: gcp("stream", "9500ms"), want: 1, severity: lint.SeverityWarning},
		{name: "pull with 30s does not trip", yaml: gcp("pull", "30s"), want: 0},
		{name: "sqs with 30s does not trip", yaml: sub("sqs", "requeueCount: 3", "requeueDelay: 30s", "deadLetterRoutingKey: dlq"), want: 0},
	})
}

func TestBudgetCannotRunDown_R11_AC11(t *testing.T) {
	runCases(t, lint.RuleBudgetCannotRunDown, []ruleCase{
		{name: "gcp without dead-letter policy trips", yaml: sub("gcp", "requeueCount: 3", "deadLetterRoutingKey: dlq"), want: 1, severity: lint.SeverityWarning,
			contains: []string{`"orders"`, "requeueCount 3", "delivery_attempt", "gcp.deadLetterPolicy"}, line: 12},
		{name: "gcp with dead-letter policy does not trip", yaml: sub("gcp", "requeueCount: 3", "deadLetterRoutingKey: dlq", "gcp:\n  deadLetterPolicy:\n    topic: native"), want: 0},
		{name: "gcp unlimited does not trip", yaml: sub("gcp", "requeueCount: -1"), want: 0},
		{name: "sqs never trips", yaml: sub("sqs", "requeueCount: 3", "deadLetterRoutingKey: dlq"), want: 0},
		{name: "rocketmq never trips", yaml: sub("rocketmq", "requeueCount: 3", "deadLetterRoutingKey: dlq"), want: 0},
		{name: "memory never trips", yaml: sub("memory", "requeueCount: 3", "deadLetterRoutingKey: dlq"), want: 0},
	})
}

func TestBudgetNoDeadLetter_R17(t *testing.T) {
	runCases(t, lint.RuleBudgetNoDeadLetter, []ruleCase{
		{name: "budget without destination trips", yaml: sub("sqs", "requeueCount: 3"), want: 1, severity: lint.SeverityWarning,
			contains: []string{`"orders"`, "requeueCount 3", "discarded", "deadLetterRoutingKey"}},
		{name: "invalid-message key alone still trips", yaml: sub("sqs", "requeueCount: 3", "invalidMessageRoutingKey: bad"), want: 1, severity: lint.SeverityWarning},
		{name: "budget with destination does not trip", yaml: sub("sqs", "requeueCount: 3", "deadLetterRoutingKey: dlq"), want: 0},
		{name: "no budget does not trip", yaml: sub("sqs"), want: 0},
	})
}

func TestDeadLetterIsSource(t *testing.T) {
	runCases(t, lint.RuleDeadLetterIsSource, []ruleCase{
		{name: "dead letter equals channel trips", yaml: sub("sqs", "deadLetterRoutingKey: orders"), want: 1, severity: lint.SeverityError,
			contains: []string{`deadLetterRoutingKey "orders"`, "orders-dlq"}, line: 12},
		{name: "invalid equals routing key trips", yaml: sub("gcp", "routingKey: orders-topic", "invalidMessageRoutingKey: orders-topic"), want: 1, severity: lint.SeverityError,
			contains: []string{"invalidMessageRoutingKey", "topic (routingKey)"}},
		{name: "sqs native dead-letter queue equals channel trips", yaml: sub("sqs", "sqs:\n  redrivePolicy:\n    deadLetterQueue: orders\n    maxReceiveCount: 5"), want: 1, severity: lint.SeverityError,
			contains: []string{"sqs.redrivePolicy.deadLetterQueue"}},
		{name: "gcp policy topic equals topic trips", yaml: sub("gcp", "gcp:\n  deadLetterPolicy:\n    topic: orders"), want: 1, severity: lint.SeverityError,
			contains: []string{"gcp.deadLetterPolicy.topic"}},
		{name: "separate destinations do not trip", yaml: sub("sqs", "deadLetterRoutingKey: orders-dlq", "invalidMessageRoutingKey: orders-invalid",
			"sqs:\n  redrivePolicy:\n    deadLetterQueue: orders-redrive\n    maxReceiveCount: 5"), want: 0},
	})
}

func TestBufferSizeRange(t *testing.T) {
	runCases(t, lint.RuleBufferSizeRange, []ruleCase{
		{name: "eleven is refused by the parser and reported under the rule", yaml: sub("sqs", "bufferSize: 11"), want: 1, severity: lint.SeverityError,
			contains: []string{"bufferSize", "11"}, line: 12},
		{name: "zero is refused", yaml: sub("memory", "bufferSize: 0"), want: 1, severity: lint.SeverityError},
		{name: "ten does not trip", yaml: sub("sqs", "bufferSize: 10"), want: 0},
	})
	// A subscription built in code (not through the parser) is checked too.
	s := &config.Subscription{Name: "x", Transport: config.TransportMemory, BufferSize: 0, RequeueCount: -1, Memory: &config.Memory{VisibilityTimeout: time.Second}}
	if got := only(lint.New(rules.Default()).Subscription(s), lint.RuleBufferSizeRange); len(got) != 1 {
		t.Fatalf("bufferSize 0 built in code: %d findings, want 1", len(got))
	}
}

func TestGCPMaxDeliveryAttemptsRange(t *testing.T) {
	runCases(t, lint.RuleGCPMaxDeliveryAttempts, []ruleCase{
		{name: "101 is refused and reported under the rule", yaml: sub("gcp", "gcp:\n  deadLetterPolicy:\n    topic: native\n    maxDeliveryAttempts: 101"), want: 1, severity: lint.SeverityError,
			contains: []string{"101"}},
		{name: "4 is refused", yaml: sub("gcp", "gcp:\n  deadLetterPolicy:\n    topic: native\n    maxDeliveryAttempts: 4"), want: 1, severity: lint.SeverityError},
		{name: "100 does not trip", yaml: sub("gcp", "gcp:\n  deadLetterPolicy:\n    topic: native\n    maxDeliveryAttempts: 100"), want: 0},
	})
	g := rules.GCP{}
	s := &config.Subscription{Name: "x", GCP: &config.GCP{DeadLetterPolicy: &config.DeadLetterPolicy{Topic: "t", MaxDeliveryAttempts: 3}}}
	if got := only(g.Check(s), lint.RuleGCPMaxDeliveryAttempts); len(got) != 1 {
		t.Fatalf("maxDeliveryAttempts 3 built in code: %d findings, want 1", len(got))
	}
	s.GCP.DeadLetterPolicy.MaxDeliveryAttempts = 0 // the service default, 5
	if got := only(g.Check(s), lint.RuleGCPMaxDeliveryAttempts); len(got) != 0 {
		t.Fatalf("maxDeliveryAttempts 0: %d findings, want 0", len(got))
	}
	if m, ok := g.NativeLimit(s); !ok || m.Value != 5 {
		t.Fatalf("NativeLimit with maxDeliveryAttempts 0 = %v %v, want 5 (the service default)", m, ok)
	}
}

func TestGCPAckDeadlineRange(t *testing.T) {
	runCases(t, lint.RuleGCPAckDeadlineRange, []ruleCase{
		{name: "5s trips", yaml: sub("gcp", "gcp:\n  ackDeadline: 5s"), want: 1, severity: lint.SeverityError, contains: []string{"gcp.ackDeadline 5s", "10s..600s"}, line: 13},
		{name: "700s trips", yaml: sub("gcp", "gcp:\n  ackDeadline: 700s"), want: 1, severity: lint.SeverityError, contains: []string{"11m40s"}},
		{name: "dead-letter subscription's deadline trips", yaml: sub("gcp", "gcp:\n  deadLetterPolicy:\n    topic: native\n    ackDeadline: 1h"), want: 1, severity: lint.SeverityError,
			contains: []string{"gcp.deadLetterPolicy.ackDeadline"}},
		{name: "30s does not trip", yaml: sub("gcp", "gcp:\n  ackDeadline: 30s"), want: 0},
		{name: "0 (service default) does not trip", yaml: sub("gcp", "gcp:\n  ackDeadline: 0"), want: 0},
	})
}

func TestSQSVisibilityTimeoutRange(t *testing.T) {
	runCases(t, lint.RuleSQSVisibilityTimeoutRange, []ruleCase{
		{name: "13h is refused and reported under the rule", yaml: sub("sqs", "sqs:\n  visibilityTimeout: 13h"), want: 1, severity: lint.SeverityError, contains: []string{"13h"}},
		{name: "12h does not trip", yaml: sub("sqs", "sqs:\n  visibilityTimeout: 12h"), want: 0},
	})
	s := &config.Subscription{Name: "x", SQS: &config.SQS{VisibilityTimeout: 13 * time.Hour}}
	if got := only(rules.SQS{}.Check(s), lint.RuleSQSVisibilityTimeoutRange); len(got) != 1 {
		t.Fatalf("visibilityTimeout 13h built in code: %d findings, want 1", len(got))
	}
}

func TestHandlerTimeoutExceedsLease(t *testing.T) {
	exec := func(timeout string) string {
		return "handler:\n  type: exec\n  command: ./handle\n  timeout: " + timeout
	}
	// sub() writes a builtin handler; replace it for these cases.
	withExec := func(transport, timeout string, extra ...string) string {
		s := sub(transport, extra...)
		return strings.Replace(s, "    handler:\n      type: builtin\n      name: ack\n", indent(exec(timeout)), 1)
	}
	runCases(t, lint.RuleHandlerTimeoutExceedsLease, []ruleCase{
		{name: "sqs 60s handler on 30s visibility without extension trips", yaml: withExec("sqs", "60s", "drainTimeout: 2m", "maxLeaseExtension: 0s"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"handler.timeout 1m", "sqs.visibilityTimeout 30s", "maxLeaseExtension: 0"}, line: 12},
		{name: "sqs 60s handler on 30s visibility is extended", yaml: withExec("sqs", "60s", "drainTimeout: 2m"), want: 0},
		{name: "sqs 2h handler beyond 30s plus the 1h cap trips", yaml: withExec("sqs", "2h", "drainTimeout: 3h"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"handler.timeout 2h", "maxLeaseExtension 1h"}},
		{name: "sqs 20s handler does not trip", yaml: withExec("sqs", "20s"), want: 0},
		{name: "sqs visibilityTimeout 0s is the queue's own, extended by consume", yaml: withExec("sqs", "60s", "drainTimeout: 2m", "sqs:\n  visibilityTimeout: 0s"), want: 0},
		{name: "gcp stream 2m handler beyond 1m maxExtension says one remedy plainly", yaml: withExec("gcp", "2m", "drainTimeout: 3m", "gcp:\n  mode: stream\n  maxExtension: 1m"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"handler.timeout 2m is longer than gcp.maxExtension 1m and the Pub/Sub client extends", "delivered again; make maxExtension longer than 2m or shorten handler.timeout"}},
		{name: "without extension the remedies read as one list", yaml: withExec("sqs", "60s", "drainTimeout: 2m", "maxLeaseExtension: 0s"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"delivered again; set maxLeaseExtension above 0 (default 1h), make visibilityTimeout longer than 1m or shorten handler.timeout"}},
		{name: "gcp pull 60s handler on 30s ack deadline without extension trips", yaml: withExec("gcp", "60s", "drainTimeout: 2m", "maxLeaseExtension: 0s", "gcp:\n  mode: pull\n  ackDeadline: 30s"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"gcp.ackDeadline 30s"}},
		{name: "gcp pull 60s handler is extended", yaml: withExec("gcp", "60s", "drainTimeout: 2m", "gcp:\n  mode: pull\n  ackDeadline: 30s"), want: 0},
		{name: "gcp stream extends the lease to maxExtension", yaml: withExec("gcp", "60s", "drainTimeout: 2m", "gcp:\n  mode: stream\n  ackDeadline: 30s"), want: 0},
		{name: "rocketmq 60s handler on 30s invisible duration without extension trips", yaml: withExec("rocketmq", "60s", "drainTimeout: 2m", "maxLeaseExtension: 0s"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"rocketmq.invisibleDuration 30s"}},
		{name: "memory 60s handler on 30s visibility without extension trips", yaml: withExec("memory", "60s", "drainTimeout: 2m", "maxLeaseExtension: 0s"), want: 1, severity: lint.SeverityWarning},
		{name: "builtin handler has no timeout", yaml: sub("sqs", "sqs:\n  visibilityTimeout: 1s"), want: 0},
		// SQS keeps a message at most 12h from its receive, so
		// raising maxLeaseExtension past that is never the advice.
		{name: "sqs 20h handler says the 12h ceiling, not raise maxLeaseExtension", yaml: withExec("sqs", "20h", "drainTimeout: 21h", "maxLeaseExtension: 30h", "sqs:\n  visibilityTimeout: 1h"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"handler.timeout 20h is longer than SQS's 12h visibility ceiling", "shorten handler.timeout below 11h59m"}, absent: []string{"raise maxLeaseExtension"}},
		{name: "sqs 13h handler with the default cap says the ceiling", yaml: withExec("sqs", "13h", "drainTimeout: 14h"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"12h visibility ceiling"}, absent: []string{"raise maxLeaseExtension"}},
		{name: "sqs 5h handler: raising maxLeaseExtension within the ceiling is still the advice", yaml: withExec("sqs", "5h", "drainTimeout: 6h"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"raise maxLeaseExtension to at least 4h59m30s"}},
		{name: "sqs 11h handler under 1h + 11h cap (past the ceiling) does not trip this rule", yaml: withExec("sqs", "11h", "drainTimeout: 12h", "maxLeaseExtension: 11h", "sqs:\n  visibilityTimeout: 1h"), want: 0},
	})
}

// TestLeaseExtensionPastCeiling: SQS's 12h ceiling on a message's
// visibility is reported where the lease plus maxLeaseExtension passes it,
// whatever the handler.
func TestLeaseExtensionPastCeiling(t *testing.T) {
	runCases(t, lint.RuleLeaseExtensionPastCeiling, []ruleCase{
		{name: "sqs 30s + 24h trips", yaml: sub("sqs", "maxLeaseExtension: 24h"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"maxLeaseExtension 24h", "lower maxLeaseExtension to at most 11h58m30s"}},
		{name: "sqs 1h + 11h trips (the pump stops a minute short)", yaml: sub("sqs", "maxLeaseExtension: 11h", "sqs:\n  visibilityTimeout: 1h"), want: 1, severity: lint.SeverityWarning},
		{name: "sqs 30s + 1h does not trip", yaml: sub("sqs"), want: 0},
		{name: "sqs without extension does not trip", yaml: sub("sqs", "maxLeaseExtension: 0s"), want: 0},
		{name: "gcp pull has no ceiling", yaml: sub("gcp", "maxLeaseExtension: 48h", "gcp:\n  mode: pull\n  ackDeadline: 30s"), want: 0},
		{name: "rocketmq has no ceiling", yaml: sub("rocketmq", "maxLeaseExtension: 48h"), want: 0},
	})
}

// TestRocketMQInvisibleDurationRange: the proxy's default bounds.
func TestRocketMQInvisibleDurationRange(t *testing.T) {
	runCases(t, lint.RuleRocketMQInvisibleDuration, []ruleCase{
		{name: "5s trips", yaml: sub("rocketmq", "rocketmq:\n  consumerGroup: g\n  invisibleDuration: 5s"), want: 1, severity: lint.SeverityWarning, contains: []string{"rocketmq.invisibleDuration 5s", "10s..12h"}},
		{name: "13h trips", yaml: sub("rocketmq", "rocketmq:\n  consumerGroup: g\n  invisibleDuration: 13h"), want: 1, severity: lint.SeverityWarning},
		{name: "10s does not trip", yaml: sub("rocketmq", "rocketmq:\n  consumerGroup: g\n  invisibleDuration: 10s"), want: 0},
		{name: "the 30s default does not trip", yaml: sub("rocketmq"), want: 0},
	})
}

// Without lease extension the wait in the buffer plus the handler must fit
// the lease (ADR 0005).
func TestBufferedWaitExceedsLease(t *testing.T) {
	withExec := func(transport, timeout string, extra ...string) string {
		s := sub(transport, extra...)
		return strings.Replace(s, "    handler:\n      type: builtin\n      name: ack\n", indent("handler:\n  type: exec\n  command: ./handle\n  timeout: "+timeout), 1)
	}
	runCases(t, lint.RuleBufferedWaitExceedsLease, []ruleCase{
		{name: "sqs 10 x 5s proactor on 30s without extension trips", yaml: withExec("sqs", "5s", "bufferSize: 10", "maxLeaseExtension: 0s"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"55s", "bufferSize 10", "sqs.visibilityTimeout 30s", "maxLeaseExtension: 0"}},
		{name: "sqs 10 x 5s reactor on 30s without extension trips", yaml: withExec("sqs", "5s", "bufferSize: 10", "messagePumpType: reactor", "maxLeaseExtension: 0s"), want: 1, severity: lint.SeverityWarning, contains: []string{"50s"}},
		{name: "sqs 10 x 5s with extension does not trip", yaml: withExec("sqs", "5s", "bufferSize: 10"), want: 0},
		{name: "sqs 2 x 5s fits 30s", yaml: withExec("sqs", "5s", "bufferSize: 2", "maxLeaseExtension: 0s"), want: 0},
		{name: "gcp stream is never extended by the pump", yaml: withExec("gcp", "5s", "bufferSize: 10", "gcp:\n  mode: stream\n  maxExtension: 30s"), want: 1, severity: lint.SeverityWarning, contains: []string{"gcp.maxExtension 30s", "extends a streamed message's lease for gcp.maxExtension and no longer", "handled again; lower bufferSize or make maxExtension at least 55s"}},
		{name: "a handler longer than the lease is the other rule", yaml: withExec("sqs", "40s", "bufferSize: 10", "drainTimeout: 1m", "maxLeaseExtension: 0s"), want: 0},
	})
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

func TestRequeueDelayExceedsLimit(t *testing.T) {
	runCases(t, lint.RuleRequeueDelayExceedsLimit, []ruleCase{
		{name: "gcp 15m under validate trips: the hold is cut", yaml: sub("gcp", "requeueDelay: 15m", "makeChannels: validate"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"requeueDelay 15m", "ack-deadline maximum 10m", "returns after 10m"}, line: 12},
		{name: "gcp 15m under assume trips", yaml: sub("gcp", "requeueDelay: 15m", "makeChannels: assume"), want: 1, severity: lint.SeverityWarning},
		{name: "gcp 15m under create is gcp-retry-policy-range, not this", yaml: sub("gcp", "requeueDelay: 15m"), want: 0},
		{name: "gcp beyond maxRequeueDelay under create is gcp-retry-policy-range, not this", yaml: sub("gcp", "requeueDelay: 2m", "gcp:\n  maxRequeueDelay: 1m"), want: 0},
		{name: "gcp beyond maxRequeueDelay, validate: no retry policy made, the hold is the delay", yaml: sub("gcp", "requeueDelay: 2m", "makeChannels: validate", "gcp:\n  maxRequeueDelay: 1m"), want: 0},
		{name: "sqs 13h is refused, under requeue-delay-range", yaml: sub("sqs", "requeueDelay: 13h"), want: 0},
		{name: "gcp 5m does not trip", yaml: sub("gcp", "requeueDelay: 5m"), want: 0},
		{name: "memory has no maximum", yaml: sub("memory", "requeueDelay: 100h"), want: 0},
	})
}

// TestGCPRetryPolicyRange: under makeChannels create (the default) a
// requeueDelay above 0 makes a retry policy (minimum requeueDelay, maximum
// gcp.maxRequeueDelay or 600s), which Pub/Sub refuses past 600s or with a
// minimum above the maximum: an Error at the field to change, as consume
// cannot start. TestGCPRetryPolicyRange_AgreesWithPubSub
// (internal/lint/rules) checks each case against the Pub/Sub emulator.
func TestGCPRetryPolicyRange(t *testing.T) {
	runCases(t, lint.RuleGCPRetryPolicyRange, []ruleCase{
		{name: "default create, 15m", yaml: sub("gcp", "requeueDelay: 15m"), want: 1, severity: lint.SeverityError,
			contains: []string{`"orders"`, "requeueDelay 15m is the minimum back-off", "Pub/Sub takes at most 10m", "consume cannot create or update the subscription", "at most 10m", "makeChannels: validate"}, line: 12},
		{name: "explicit create, 10m1s", yaml: sub("gcp", "makeChannels: create", "requeueDelay: 601s"), want: 1, severity: lint.SeverityError, line: 13},
		{name: "above a lower maxRequeueDelay", yaml: sub("gcp", "requeueDelay: 2m", "gcp:\n  maxRequeueDelay: 1m"), want: 1, severity: lint.SeverityError,
			contains: []string{"requeueDelay 2m is above gcp.maxRequeueDelay 1m", "minimum back-off (requeueDelay) above its maximum", "at most 1m", "at least 2m"}, line: 12},
		{name: "above 10m and a lower maxRequeueDelay: one finding, the lower bound", yaml: sub("gcp", "requeueDelay: 15m", "gcp:\n  maxRequeueDelay: 1m"), want: 1, severity: lint.SeverityError,
			contains: []string{"requeueDelay 15m", "use a requeueDelay of at most 1m"}},
		{name: "maxRequeueDelay above 10m", yaml: sub("gcp", "requeueDelay: 10s", "gcp:\n  maxRequeueDelay: 11m"), want: 1, severity: lint.SeverityError,
			contains: []string{"gcp.maxRequeueDelay 11m is the maximum back-off", "at most 10m"}, line: 14},
		{name: "both above 10m: two findings", yaml: sub("gcp", "requeueDelay: 15m", "gcp:\n  maxRequeueDelay: 20m"), want: 2, severity: lint.SeverityError},
		{name: "10m exactly, both", yaml: sub("gcp", "requeueDelay: 10m", "gcp:\n  maxRequeueDelay: 10m"), want: 0},
		{name: "equal minimum and maximum", yaml: sub("gcp", "requeueDelay: 1m", "gcp:\n  maxRequeueDelay: 1m"), want: 0},
		{name: "requeueDelay 0 makes no retry policy", yaml: sub("gcp", "gcp:\n  maxRequeueDelay: 11m"), want: 0},
		{name: "validate makes no retry policy", yaml: sub("gcp", "requeueDelay: 15m", "makeChannels: validate", "gcp:\n  maxRequeueDelay: 11m"), want: 0},
		{name: "assume makes no retry policy", yaml: sub("gcp", "requeueDelay: 15m", "makeChannels: assume"), want: 0},
		{name: "sqs has no retry policy", yaml: sub("sqs", "requeueDelay: 11h"), want: 0},
	})
}

func TestRequeueDelayRange(t *testing.T) {
	runCases(t, lint.RuleRequeueDelayRange, []ruleCase{
		{name: "sqs 13h is refused and reported under the rule", yaml: sub("sqs", "requeueDelay: 13h"), want: 1, severity: lint.SeverityError,
			contains: []string{"13h is out of range", "0s..12h"}, line: 12},
		{name: "sqs 999999h", yaml: sub("sqs", "requeueDelay: 999999h"), want: 1, severity: lint.SeverityError},
		{name: "a negative delay on any transport", yaml: sub("memory", "requeueDelay: -1s"), want: 1, severity: lint.SeverityError, contains: []string{"-1s is out of range"}},
		{name: "sqs 12h does not trip", yaml: sub("sqs", "requeueDelay: 12h"), want: 0},
		{name: "gcp 15m is capped, not refused", yaml: sub("gcp", "requeueDelay: 15m"), want: 0},
	})
}

// TestConfigFindings_SeverityIsTheRules: a value the parser refuses is
// reported under a rule whose own severity (the one --list-rules,
// --explain and SARIF show) is the finding's: an error, as consume refuses
// the file.
func TestConfigFindings_SeverityIsTheRules(t *testing.T) {
	for _, y := range []string{
		sub("memory", "bufferSize: 25"),
		sub("memory", "requeueDelay: -1s"),
		sub("sqs", "requeueDelay: 999999h"),
		sub("sqs", "sqs:\n  visibilityTimeout: 13h"),
		sub("gcp", "gcp:\n  deadLetterPolicy:\n    topic: t\n    maxDeliveryAttempts: 200"),
		sub("memory", "requeueCont: 3"),
	} {
		fs := lintYAML(t, y)
		if len(fs) == 0 {
			t.Fatalf("no findings for\n%s", y)
		}
		for _, f := range fs {
			r, ok := lint.Lookup(f.RuleID)
			if !ok || f.Severity != lint.SeverityError || r.Severity != f.Severity {
				t.Errorf("finding %s is %s but its rule says %s: %s", f.RuleID, f.Severity, r.Severity, f.Message)
			}
		}
	}
}

func TestOrderingWithPerformers(t *testing.T) {
	runCases(t, lint.RuleOrderingWithPerformers, []ruleCase{
		{name: "ordered reactor with two performers trips", yaml: sub("gcp", "messagePumpType: reactor", "noOfPerformers: 2", "gcp:\n  enableMessageOrdering: true"), want: 1,
			severity: lint.SeverityWarning, contains: []string{"noOfPerformers 2", "gcp.enableMessageOrdering"}, line: 13},
		{name: "ordered proactor does not trip", yaml: sub("gcp", "messagePumpType: proactor", "noOfPerformers: 2", "gcp:\n  enableMessageOrdering: true"), want: 0},
		{name: "ordered reactor with one performer does not trip", yaml: sub("gcp", "messagePumpType: reactor", "gcp:\n  enableMessageOrdering: true"), want: 0},
		{name: "unordered reactor does not trip", yaml: sub("gcp", "messagePumpType: reactor", "noOfPerformers: 4"), want: 0},
	})
}

// An ordered channel that receives several messages at once
// keeps a key's order only by spending the budget of those held back.
func TestOrderingSpendsBudget(t *testing.T) {
	runCases(t, lint.RuleOrderingSpendsBudget, []ruleCase{
		{name: "sqs fifo with a batch and a budget trips", yaml: sub("sqs", "bufferSize: 10", "requeueCount: 3", "sqs:\n  queueType: fifo"), want: 1,
			severity: lint.SeverityWarning, contains: []string{"sqs.queueType fifo", "10 messages received at once", "requeueCount 3", "bufferSize: 1"}},
		{name: "sqs fifo with bufferSize 1 does not trip", yaml: sub("sqs", "bufferSize: 1", "requeueCount: 3", "sqs:\n  queueType: fifo"), want: 0},
		{name: "sqs fifo without a budget does not trip", yaml: sub("sqs", "bufferSize: 10", "requeueCount: -1", "sqs:\n  queueType: fifo"), want: 0},
		{name: "sqs standard does not trip", yaml: sub("sqs", "bufferSize: 10", "requeueCount: 3"), want: 0},
		{name: "ordered pull with a batch trips", yaml: sub("gcp", "bufferSize: 5", "requeueCount: 3", "gcp:\n  mode: pull\n  enableMessageOrdering: true"), want: 1,
			severity: lint.SeverityWarning, contains: []string{"gcp.enableMessageOrdering", "5 messages received at once"}},
		{name: "ordered stream of three performers trips at bufferSize 1", yaml: sub("gcp", "bufferSize: 1", "noOfPerformers: 3", "messagePumpType: proactor", "requeueCount: 3", "gcp:\n  mode: stream\n  enableMessageOrdering: true"), want: 1,
			severity: lint.SeverityWarning, contains: []string{"3 messages received at once"}},
		{name: "ordered pull of one at a time does not trip", yaml: sub("gcp", "bufferSize: 1", "noOfPerformers: 3", "requeueCount: 3", "gcp:\n  mode: pull\n  enableMessageOrdering: true"), want: 0},
		{name: "unordered pull does not trip", yaml: sub("gcp", "bufferSize: 10", "requeueCount: 3", "gcp:\n  mode: pull"), want: 0},
	})
}

// One deferral holds back at most the messages of its key received with
// it: the finding says how many that is (bufferSize - 1, on a stream
// bufferSize x noOfPerformers - 1) and after how many deferrals a message
// behind it reaches its budget.
func TestOrderingSpendsBudget_CostOfOneDeferral(t *testing.T) {
	runCases(t, lint.RuleOrderingSpendsBudget, []ruleCase{
		{name: "sqs fifo of ten", yaml: sub("sqs", "bufferSize: 10", "requeueCount: 3", "sqs:\n  queueType: fifo"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"one deferral costs up to 9 later messages of its key a delivery each", "behind one deferred 3 times reaches requeueCount"}},
		{name: "sqs fifo of two, the smallest batch that trips", yaml: sub("sqs", "bufferSize: 2", "requeueCount: 5", "sqs:\n  queueType: fifo"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"2 messages received at once", "one deferral costs up to 1 later message of its key", "deferred 5 times"}},
		{name: "sqs fifo proactor of several performers: the group is blocked while in flight", yaml: sub("sqs", "bufferSize: 4", "noOfPerformers: 5", "requeueCount: 3", "sqs:\n  queueType: fifo"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"4 messages received at once", "up to 3 later messages"}},
		{name: "ordered stream of two performers of bufferSize 3", yaml: sub("gcp", "bufferSize: 3", "noOfPerformers: 2", "requeueCount: 2", "gcp:\n  mode: stream\n  enableMessageOrdering: true"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"6 messages received at once", "up to 5 later messages", "deferred 2 times"}},
		{name: "requeueCount 1 is reached behind one deferral", yaml: sub("sqs", "bufferSize: 3", "requeueCount: 1", "sqs:\n  queueType: fifo"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"behind one deferred once reaches requeueCount"}},
		{name: "rocketmq is not reported: an orderly group hands out one message of a group at a time", yaml: sub("rocketmq", "bufferSize: 10", "requeueCount: 3"), want: 0},
	})
}

// withHandler is sub with a timed handler of type typ ("exec" or "http")
// whose handler.timeout is timeout. The handler takes four lines, so the
// extras start at line 13.
func withHandler(typ, timeout, transport string, extra ...string) string {
	h := "handler:\n  type: exec\n  command: ./handle\n  timeout: " + timeout
	if typ == "http" {
		h = "handler:\n  type: http\n  url: http://localhost:8080/h\n  timeout: " + timeout
	}
	return strings.Replace(sub(transport, extra...), "    handler:\n      type: builtin\n      name: ack\n", indent(h), 1)
}

// A message waiting in the pump's buffer loses a delivery to a kill, and
// to a graceful stop whose drainTimeout cannot get through the buffer: the
// rule warns where one rolling deploy and one crash leave such a message a
// single handler run (requeueCount <= lost + 1), and where the drain is too
// short whatever the budget. Edges: requeueCount 3 against 1 lost delivery,
// drainTimeout equal to the buffer's drain time.
func TestRestartsSpendBudget(t *testing.T) {
	dlq := "deadLetterRoutingKey: orders-dlq"
	runCases(t, lint.RuleRestartsSpendBudget, []ruleCase{
		{name: "proactor of bufferSize 1 with requeueCount 2 trips: a kill costs the message received ahead", yaml: sub("sqs", "requeueCount: 2", dlq), want: 1, severity: lint.SeverityWarning, line: 12,
			contains: []string{`"orders"`, "requeueCount 2", "up to 2: noOfPerformers 1 x bufferSize 1 received ahead, plus 1 in handlers", "spend 1 of a buffered message's 2 deliveries", "single handler run", "4 stops or crashes that each catch the same message (2 x requeueCount", "dead-letter it on its next delivery with no handler run at all", "use requeueCount: 3 or more", "messagePumpType: reactor with bufferSize: 1"},
			absent:   []string{"drainTimeout"}},
		{name: "requeueCount 3 against the kill alone does not trip", yaml: sub("sqs", "requeueCount: 3", dlq, "bufferSize: 10", "noOfPerformers: 10"), want: 0},
		{name: "an unlimited budget never trips", yaml: withHandler("exec", "1m", "sqs", "requeueCount: -1", "bufferSize: 10", "noOfPerformers: 10", "drainTimeout: 1s"), want: 0},
		{name: "requeueCount 1 loses no run", yaml: withHandler("exec", "1m", "sqs", "requeueCount: 1", dlq, "bufferSize: 10", "drainTimeout: 1s"), want: 0},
		{name: "requeueCount 0 behaves as 1", yaml: sub("sqs", "requeueCount: 0", dlq, "bufferSize: 10"), want: 0},
		{name: "reactor of bufferSize 1 holds no waiting message", yaml: sub("sqs", "messagePumpType: reactor", "noOfPerformers: 4", "requeueCount: 2", dlq), want: 0},
		{name: "reactor of bufferSize 2 trips with the rest of its batch", yaml: sub("sqs", "messagePumpType: reactor", "bufferSize: 2", "noOfPerformers: 3", "requeueCount: 2", dlq), want: 1, severity: lint.SeverityWarning,
			contains: []string{"up to 6: noOfPerformers 3 x bufferSize 2 received in batches, 3 of them in handlers", "spend 1 of a buffered message's 2 deliveries"}},
		{name: "proactor of several performers counts every buffer", yaml: sub("rocketmq", "bufferSize: 10", "noOfPerformers: 2", "requeueCount: 2", dlq), want: 1, severity: lint.SeverityWarning,
			contains: []string{"up to 22: noOfPerformers 2 x bufferSize 10 received ahead, plus 2 in handlers"}},
		{name: "a drain exactly as long as the buffer needs does not trip at requeueCount 3", yaml: withHandler("exec", "5s", "sqs", "requeueCount: 3", dlq, "drainTimeout: 10s"), want: 0},
		{name: "a drain a second short trips at requeueCount 3: the stop costs a delivery too", yaml: withHandler("exec", "5s", "sqs", "requeueCount: 3", dlq, "drainTimeout: 9s"), want: 1, severity: lint.SeverityWarning, line: 13,
			contains: []string{"requeueCount 3", "drainTimeout 9s cannot get through the buffer (a performer may hold 2 messages of up to handler.timeout 5s each, 10s)", "releases up to 1 waiting message unhandled as well", "spend 2 of a buffered message's 3 deliveries", "; set drainTimeout to at least 10s or lower bufferSize, or messagePumpType: reactor with bufferSize: 1"},
			absent:   []string{"use requeueCount"}},
		{name: "a short drain and requeueCount 2 need both fixes", yaml: withHandler("exec", "5s", "rocketmq", "requeueCount: 2", dlq, "drainTimeout: 9s"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"spend 2 of a buffered message's 2 deliveries", "set drainTimeout to at least 10s or lower bufferSize, and use requeueCount: 3 or more, or messagePumpType: reactor"}},
		{name: "a short drain trips whatever the budget", yaml: withHandler("http", "5s", "sqs", "requeueCount: 10", dlq, "bufferSize: 10", "noOfPerformers: 2", "drainTimeout: 30s"), want: 1, severity: lint.SeverityWarning, line: 17,
			contains: []string{"drainTimeout 30s cannot get through the buffer (a performer may hold 11 messages of up to handler.timeout 5s each, 55s)", "every graceful stop releases up to 20 waiting messages unhandled", "requeueCount 10", "20 stops or crashes that each catch the same message", "with no handler run at all", "set drainTimeout to at least 55s, or lower bufferSize"},
			absent:   []string{"single handler run"}},
		{name: "a reactor's drain needs bufferSize x handler.timeout", yaml: withHandler("exec", "5s", "sqs", "messagePumpType: reactor", "bufferSize: 3", "requeueCount: 10", dlq, "drainTimeout: 15s"), want: 0},
		{name: "a reactor's drain a second short trips", yaml: withHandler("exec", "5s", "sqs", "messagePumpType: reactor", "bufferSize: 3", "requeueCount: 10", dlq, "drainTimeout: 14s"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"a performer may hold 3 messages of up to handler.timeout 5s each, 15s", "up to 2 waiting messages"}},
		{name: "a builtin handler drains at once", yaml: sub("sqs", "requeueCount: 3", dlq, "bufferSize: 10", "drainTimeout: 1s"), want: 0},
		{name: "memory messages end with the process", yaml: sub("memory", "requeueCount: 2", dlq, "bufferSize: 10"), want: 0},
		{name: "a Pub/Sub budget that cannot run down is another rule's", yaml: sub("gcp", "requeueCount: 2", dlq), want: 0},
		{name: "a Pub/Sub budget that runs down trips", yaml: sub("gcp", "requeueCount: 2", dlq, "gcp:\n  deadLetterPolicy:\n    topic: native-dlq\n    maxDeliveryAttempts: 10"), want: 1, severity: lint.SeverityWarning},
	})
}

func TestDrainShorterThanHandler(t *testing.T) {
	runCases(t, lint.RuleDrainShorterThanHandler, []ruleCase{
		{name: "10s drain for 60s handler trips", yaml: strings.Replace(sub("memory", "memory:\n  visibilityTimeout: 5m"), "type: builtin\n      name: ack", "type: http\n      url: http://localhost:8080/h\n      timeout: 60s", 1),
			want: 1, severity: lint.SeverityNote, contains: []string{"drainTimeout 10s", "handler.timeout 1m"}},
		{name: "builtin handler does not trip", yaml: sub("memory", "drainTimeout: 1s"), want: 0},
	})
}

func TestEmptyChannelBusyPoll(t *testing.T) {
	runCases(t, lint.RuleEmptyChannelBusyPoll, []ruleCase{
		{name: "sqs short poll with no pause trips", yaml: sub("sqs", "timeOut: 0s", "emptyChannelDelay: 0s"), want: 1, severity: lint.SeverityWarning,
			contains: []string{"emptyChannelDelay 0s", "timeOut 0s", "short poll"}},
		{name: "sqs 500ms is a short poll too", yaml: sub("sqs", "timeOut: 500ms", "emptyChannelDelay: 0s"), want: 1, severity: lint.SeverityWarning},
		{name: "sqs 1s long poll does not trip", yaml: sub("sqs", "timeOut: 1s", "emptyChannelDelay: 0s"), want: 0},
		{name: "sqs short poll with the default pause does not trip", yaml: sub("sqs", "timeOut: 0s"), want: 0},
		{name: "memory waits out its timeOut", yaml: sub("memory", "timeOut: 0s", "emptyChannelDelay: 0s"), want: 0},
	})
}

func TestConfigInvalidIsAFindingWithPosition(t *testing.T) {
	fs := lintYAML(t, sub("memory", "requeueCont: 3"))
	if len(fs) != 1 {
		t.Fatalf("findings = %d, want 1:%s", len(fs), dump(fs))
	}
	f := fs[0]
	if f.RuleID != lint.RuleConfigInvalid || f.Severity != lint.SeverityError || f.Pos.Line != 12 || f.Pos.Column != 5 {
		t.Fatalf("finding = %+v, want config-invalid error at 12:5", f)
	}
	if !strings.Contains(f.Message, `did you mean "requeueCount"`) {
		t.Errorf("message %q does not suggest requeueCount", f.Message)
	}
	syntax := lintYAML(t, "  - name: [\n")
	if len(syntax) == 0 || syntax[0].RuleID != lint.RuleConfigInvalid {
		t.Fatalf("a YAML syntax error gives %s, want a config-invalid finding", dump(syntax))
	}
}

func TestConfigFindings_NotConfigErrors(t *testing.T) {
	if _, ok := lint.ConfigFindings(errors.New("read subscriptions file: no such file")); ok {
		t.Fatal("a read error was taken for config errors")
	}
	if fs, ok := lint.ConfigFindings(nil); !ok || fs != nil {
		t.Fatalf("nil error: %v %v", fs, ok)
	}
}

func TestExamplesHaveNoWarnings_AC32(t *testing.T) {
	// A clean, realistic file of every transport produces no finding at
	// Warning or above.
	yaml := sub("sqs", "requeueCount: 3", "deadLetterRoutingKey: orders-dlq", "sqs:\n  redrivePolicy:\n    deadLetterQueue: orders-redrive\n    maxReceiveCount: 7") +
		strings.Replace(sub("gcp", "requeueCount: 3", "deadLetterRoutingKey: pay-dlq", "gcp:\n  deadLetterPolicy:\n    topic: pay-native\n    maxDeliveryAttempts: 10"), "name: orders", "name: payments", 1)
	for _, f := range lintYAML(t, yaml) {
		if f.Severity >= lint.SeverityWarning {
			t.Errorf("unexpected finding %s %s: %s", f.Severity, f.RuleID, f.Message)
		}
	}
}

func TestEveryRuleHasExplanation(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range lint.Rules() {
		if seen[r.ID] {
			t.Errorf("duplicate rule id %s", r.ID)
		}
		seen[r.ID] = true
		if r.Summary == "" {
			t.Errorf("rule %s: summary missing", r.ID)
		}
		if n := len(r.Explanation); n == 0 {
			t.Errorf("rule %s: explanation missing", r.ID)
		} else if n < 80 {
			t.Errorf("rule %s: explanation too short (%d < 80 characters): say why it matters and the fix", r.ID, n)
		}
		got, ok := lint.Lookup(r.ID)
		if !ok || got.ID != r.ID {
			t.Errorf("Lookup(%q) = %v, %v", r.ID, got.ID, ok)
		}
	}
	if r, ok := lint.Lookup("r-11"); !ok || r.ID != lint.RuleBudgetCannotRunDown {
		t.Errorf("Lookup by requirement r-11 = %q, %v", r.ID, ok)
	}
	if _, ok := lint.Lookup("no-such-rule"); ok {
		t.Error("Lookup found an unknown rule")
	}
}

// TestLintDocListsEveryRule: docs/commands/lint.md has a row in its rules
// table for every rule, with the rule's severity (config-invalid, the
// parse finding, is described in the prose above the table instead), so a
// new rule cannot ship undocumented.
func TestLintDocListsEveryRule(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "commands", "lint.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, r := range lint.Rules() {
		if r.ID == lint.RuleConfigInvalid {
			if !strings.Contains(doc, "`"+r.ID+"`") {
				t.Errorf("docs/commands/lint.md does not name %s", r.ID)
			}
			continue
		}
		row := ""
		for _, l := range strings.Split(doc, "\n") {
			if strings.HasPrefix(l, "| `"+r.ID+"`") {
				row = l
				break
			}
		}
		if row == "" {
			t.Errorf("docs/commands/lint.md has no row for rule %s", r.ID)
			continue
		}
		if cells := strings.Split(row, "|"); len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[2]), r.Severity.String()) {
			t.Errorf("docs/commands/lint.md row of %s does not give its severity %s: %s", r.ID, r.Severity, row)
		}
	}
}

func TestParseSeverity(t *testing.T) {
	for in, want := range map[string]lint.Severity{"error": lint.SeverityError, "Warning": lint.SeverityWarning, "warn": lint.SeverityWarning, "note": lint.SeverityNote} {
		if got, err := lint.ParseSeverity(in); err != nil || got != want {
			t.Errorf("ParseSeverity(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := lint.ParseSeverity("fatal"); err == nil || !strings.Contains(err.Error(), "note, warning, error") {
		t.Errorf("ParseSeverity(fatal) error = %v", err)
	}
}

// named renders a subscription called name (sub's shape).
func named(name, transport string, extra ...string) string {
	return strings.Replace(sub(transport, extra...), "- name: orders", "- name: "+name, 1)
}

// A subscription that reads another's rejection destination is
// named with its pair and how its budget behaves, as the transport resolves
// names (SQS '.' is '_'; Pub/Sub compares the topic), on every transport.
func TestConsumesRejectionDestination_R28(t *testing.T) {
	runCases(t, lint.RuleConsumesRejectionDestination, []ruleCase{
		{name: "sqs dlq processor with a budget", yaml: sub("sqs", "requeueCount: 3", "deadLetterRoutingKey: orders.dlq") +
			named("dlq-processor", "sqs", "channelName: orders_dlq", "requeueCount: 3", "deadLetterRoutingKey: parked"),
			want: 1, severity: lint.SeverityNote,
			contains: []string{`subscription "dlq-processor" reads "orders.dlq", which is subscription "orders"'s deadLetterRoutingKey`, "at most 3 times per copy", `routed to its deadLetterRoutingKey "parked"`}},
		{name: "invalid-message queue, no budget", yaml: sub("memory", "invalidMessageRoutingKey: bad") +
			named("bad-reader", "memory", "channelName: bad", "requeueCount: -1"),
			want: 1, severity: lint.SeverityNote, contains: []string{"invalidMessageRoutingKey", "requeueCount is -1", "for ever"}},
		{name: "no dead letter of its own", yaml: sub("rocketmq", "deadLetterRoutingKey: orders-dlq") +
			named("dlq-reader", "rocketmq", "channelName: orders-dlq", "requeueCount: 2", "rocketmq:\n  consumerGroup: g2"),
			want: 1, severity: lint.SeverityNote, contains: []string{"at most 2 times", "discarded"}},
		{name: "gcp compares the topic", yaml: sub("gcp", "deadLetterRoutingKey: orders-dlq") +
			named("dlq-reader", "gcp", "channelName: any-sub", "routingKey: orders-dlq"),
			want: 1, severity: lint.SeverityNote},
		{name: "native redrive queue", yaml: sub("sqs", "sqs:\n  redrivePolicy:\n    deadLetterQueue: redrive\n    maxReceiveCount: 5") +
			named("redrive-reader", "sqs", "channelName: redrive", "requeueCount: 3"),
			want: 1, severity: lint.SeverityNote, contains: []string{"carry no rejection metadata", "may fire at once"}},
		{name: "other transport does not trip", yaml: sub("sqs", "deadLetterRoutingKey: dlq") + named("dlq-reader", "memory", "channelName: dlq"), want: 0},
		{name: "unrelated subscriptions do not trip", yaml: sub("sqs", "deadLetterRoutingKey: dlq") + named("other", "sqs", "channelName: other"), want: 0},
	})
}

// TestFindings_MergeKeysPointAtTheLineToEdit: a finding about a value a
// subscription sets over a merge key (<<) points at the subscription's own
// key; one about a value the merge brings in points at the anchored
// mapping (an x- extension field here) and says it came through <<.
func TestFindings_MergeKeysPointAtTheLineToEdit(t *testing.T) {
	src := `x-defaults: &d
  transport: memory
  requeueCount: 0
  deadLetterRoutingKey: parked
  handler: {type: builtin, name: ack}
subscriptions:
  - <<: *d
    name: overriding
    requeueCount: 0
  - <<: *d
    name: merged
`
	fs, f := lint.New(rules.Default()).Source("m.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if f == nil {
		t.Fatalf("the file does not parse:%s", dump(fs))
	}
	zero := only(fs, lint.RuleBudgetZero)
	if len(zero) != 2 {
		t.Fatalf("budget-zero findings = %d, want 2:%s", len(zero), dump(fs))
	}
	for _, z := range zero {
		line, col, note := 9, 5, false
		if z.Subscription == "merged" {
			line, col, note = 3, 3, true
		}
		if z.Pos.Line != line || z.Pos.Column != col {
			t.Errorf("%s: budget-zero at %s, want %d:%d", z.Subscription, z.Pos, line, col)
		}
		if strings.HasSuffix(z.Message, config.MergedNote) != note {
			t.Errorf("%s: message %q: want the merge key named: %v", z.Subscription, z.Message, note)
		}
	}
}

// TestUnboundedRedelivery_R6: requeueCount -1 (the default) with no
// native limit and a handler that can defer is a Warning naming the
// transport's native limit; a budget, a native limit, a handler that
// never defers or the memory transport end it.
func TestUnboundedRedelivery_R6(t *testing.T) {
	deferring := func(transport string, extra ...string) string {
		return strings.Replace(sub(transport, extra...), "name: ack", "name: defer", 1)
	}
	runCases(t, lint.RuleUnboundedRedelivery, []ruleCase{
		{name: "sqs no budget no redrive trips", yaml: deferring("sqs", "requeueCount: -1", "requeueDelay: 0s"), want: 1, severity: lint.SeverityWarning,
			contains: []string{`"orders"`, "requeueCount -1", "at once", "sqs.redrivePolicy.maxReceiveCount", "never dead-lettered"}, line: 12},
		{name: "default budget trips", yaml: deferring("sqs", "requeueDelay: 5s"), want: 1, severity: lint.SeverityWarning, contains: []string{"every 5s (requeueDelay)"}},
		{name: "gcp names its limit", yaml: deferring("gcp"), want: 1, severity: lint.SeverityWarning, contains: []string{"gcp.deadLetterPolicy.maxDeliveryAttempts"}},
		{name: "exec handler trips", yaml: strings.Replace(sub("sqs"), "type: builtin\n      name: ack", "type: exec\n      command: sh", 1), want: 1, severity: lint.SeverityWarning},
		{name: "sqs redrive policy bounds it", yaml: deferring("sqs", "sqs:\n  redrivePolicy: {deadLetterQueue: orders-native, maxReceiveCount: 5}"), want: 0},
		{name: "gcp dead-letter policy bounds it", yaml: deferring("gcp", "gcp:\n  deadLetterPolicy: {topic: orders-native, maxDeliveryAttempts: 5}"), want: 0},
		{name: "a budget bounds it", yaml: deferring("sqs", "requeueCount: 3", "deadLetterRoutingKey: dlq"), want: 0},
		{name: "ack never defers", yaml: sub("sqs"), want: 0},
		{name: "a script that never defers", yaml: strings.Replace(sub("sqs"), "name: ack", "script: reject", 1), want: 0},
		{name: "a script that can defer trips", yaml: strings.Replace(sub("sqs"), "name: ack", `script: "defer,ack"`, 1), want: 1, severity: lint.SeverityWarning},
		{name: "memory ends with the process", yaml: deferring("memory"), want: 0},
	})
}

// TestUnacceptableDiscarded_R17: a subscription with neither an
// invalid-message nor a dead-letter destination gets a Note that an
// unacceptable message is acknowledged and discarded; either destination
// ends it.
func TestUnacceptableDiscarded_R17(t *testing.T) {
	runCases(t, lint.RuleUnacceptableDiscarded, []ruleCase{
		{name: "neither trips", yaml: sub("sqs"), want: 1, severity: lint.SeverityNote,
			contains: []string{`"orders"`, "invalidMessageRoutingKey", "discarded"}},
		{name: "memory ends with the process", yaml: sub("memory"), want: 0},
		{name: "invalid-message key ends it", yaml: sub("sqs", "invalidMessageRoutingKey: bad"), want: 0},
		{name: "dead-letter key ends it", yaml: sub("sqs", "deadLetterRoutingKey: dlq"), want: 0},
	})
}

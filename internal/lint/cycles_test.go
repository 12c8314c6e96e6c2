package lint_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// cycleSub renders a subscription called name on transport with the given
// flow-style extra fields ("deadLetterRoutingKey: qb").
func cycleSub(name, transport string, extra ...string) string {
	s := fmt.Sprintf("  - name: %s\n    transport: %s\n    handler: {type: builtin, name: reject}\n", name, transport)
	for _, e := range extra {
		s += "    " + e + "\n"
	}
	if transport == "rocketmq" {
		s += "    rocketmq: {consumerGroup: g}\n"
	}
	return s
}

// TestRejectionCycle_IsAnErrorOnEachSubscriptionOfTheCycle: A rejection cycle
// among a file's subscriptions is an Error on each subscription of it, naming
// every subscription of the shortest cycle through it and each step's
// destination, pointing at the destination that leads round; names are compared
// as the transport resolves them, and chains, self-loops and different
// transports are no cycle.
func TestRejectionCycle_IsAnErrorOnEachSubscriptionOfTheCycle(t *testing.T) {
	runCases(t, lint.RuleRejectionCycle, []ruleCase{
		{name: "two dead-letter queues of each other trip on both", yaml: cycleSub("qa", "memory", "deadLetterRoutingKey: qb") + cycleSub("qb", "memory", "deadLetterRoutingKey: qa"),
			want: 2, severity: lint.SeverityError,
			contains: []string{"rejection cycle of 2 subscriptions", `(deadLetterRoutingKey "qb") -> `, `(deadLetterRoutingKey "qa") -> `}},
		{name: "three through an invalid-message channel, SQS names resolved", yaml: cycleSub("a", "sqs", "deadLetterRoutingKey: b") +
			cycleSub("b", "sqs", "deadLetterRoutingKey: b-dlq", "invalidMessageRoutingKey: c.x") + cycleSub("c", "sqs", "channelName: c_x", "deadLetterRoutingKey: a"),
			want: 3, severity: lint.SeverityError,
			contains: []string{"rejection cycle of 3 subscriptions", `"a" (`, `"b" (`, `"c" (`, `invalidMessageRoutingKey "c.x"`}},
		{name: "a native redrive step closes a cycle", yaml: cycleSub("qa", "sqs", "deadLetterRoutingKey: qb") +
			cycleSub("qb", "sqs", "sqs: {redrivePolicy: {deadLetterQueue: qa, maxReceiveCount: 5}}"),
			want: 2, severity: lint.SeverityError, contains: []string{`sqs.redrivePolicy.deadLetterQueue "qa"`}},
		{name: "Pub/Sub compares topics", yaml: cycleSub("pay-a", "gcp", "routingKey: top-a", "deadLetterRoutingKey: top-b") + cycleSub("pay-b", "gcp", "routingKey: top-b", "deadLetterRoutingKey: top-a"),
			want: 2, severity: lint.SeverityError},
		{name: "a chain to a DLQ processor is no cycle", yaml: cycleSub("orders", "memory", "deadLetterRoutingKey: orders-dlq") +
			cycleSub("proc", "memory", "channelName: orders-dlq", "deadLetterRoutingKey: parked"), want: 0},
		{name: "a destination equal to the source is dead-letter-is-source only", yaml: cycleSub("qa", "memory", "deadLetterRoutingKey: qa"), want: 0},
		{name: "different transports are not compared", yaml: cycleSub("qa", "memory", "deadLetterRoutingKey: qb") + cycleSub("qb", "rocketmq", "deadLetterRoutingKey: qa"), want: 0},
	})
}

// Only the subscriptions on a cycle are reported, each with the shortest
// cycle through it: a subscription that feeds a cycle is not on it.
func TestRejectionCycleNamesOnlyItsMembers(t *testing.T) {
	yaml := cycleSub("feeder", "memory", "deadLetterRoutingKey: qa") +
		cycleSub("qa", "memory", "deadLetterRoutingKey: qb") +
		cycleSub("qb", "memory", "deadLetterRoutingKey: qc", "invalidMessageRoutingKey: qa") +
		cycleSub("qc", "memory", "deadLetterRoutingKey: qa")
	got := map[string]string{}
	for _, f := range only(lintYAML(t, yaml), lint.RuleRejectionCycle) {
		got[f.Subscription] = f.Message
	}
	if _, ok := got["feeder"]; ok || len(got) != 3 {
		t.Fatalf("findings on %v, want qa, qb and qc", got)
	}
	if !strings.Contains(got["qa"], "cycle of 2 subscriptions") || !strings.Contains(got["qc"], "cycle of 3 subscriptions") {
		t.Errorf("qa: %s\nqc: %s\nwant qa's shortest cycle (through qb's invalid-message channel) and qc's of three", got["qa"], got["qc"])
	}
}

// consume judges each subscription it starts with SubscriptionIn: the
// cycle is found there too, for a subscription started alone.
func TestRejectionCycleInSubscriptionIn(t *testing.T) {
	yaml := header + cycleSub("qa", "memory", "deadLetterRoutingKey: qb") + cycleSub("qb", "memory", "deadLetterRoutingKey: qa")
	f, err := config.Parse("brighter.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	got := only(lint.New(rules.Default()).SubscriptionIn(f, f.Subscriptions[1]), lint.RuleRejectionCycle)
	if len(got) != 1 || got[0].Subscription != "qb" || got[0].Severity != lint.SeverityError {
		t.Fatalf("SubscriptionIn(qb) = %s, want one rejection-cycle Error on qb", dump(got))
	}
}

// dead-letter-is-source compares names as the transport resolves them:
// SQS turns '.' into '_', so channelName lo.op with deadLetterRoutingKey
// lo_op (or a native dead-letter queue lo_op) is one queue; elsewhere the
// names are as written.
func TestDeadLetterIsSourceResolvesNames(t *testing.T) {
	runCases(t, lint.RuleDeadLetterIsSource, []ruleCase{
		{name: "sqs dots and underscores", yaml: sub("sqs", "channelName: lo.op", "deadLetterRoutingKey: lo_op"), want: 1, severity: lint.SeverityError,
			contains: []string{`deadLetterRoutingKey "lo_op"`, `channelName "lo.op"`, `queue "lo_op"`}},
		{name: "sqs native queue", yaml: sub("sqs", "channelName: lo_op", "sqs:\n  redrivePolicy:\n    deadLetterQueue: lo.op\n    maxReceiveCount: 5"), want: 1, severity: lint.SeverityError},
		{name: "memory takes names as written", yaml: sub("memory", "channelName: lo.op", "deadLetterRoutingKey: lo_op"), want: 0},
	})
}

package lint

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// pairwiseRejectionConsumers is the rule by its definition: s compared with
// every other subscription of f. The index must find exactly these.
func pairwiseRejectionConsumers(f *config.File, s *config.Subscription) []Finding {
	c := &check{s: s}
	for _, src := range f.Subscriptions {
		if src == nil || src == s || src.Transport != s.Transport {
			continue
		}
		for _, d := range destinations(src) {
			if destKey(src.Transport, d.name) != readKey(s) {
				continue
			}
			c.add(RuleConsumesRejectionDestination, pick(s, "channelName", "routingKey", "name"),
				"subscription %q reads %q, which is subscription %q's %s: %s",
				s.Name, d.name, src.Name, d.field, budgetBehaviour(s, src, d))
		}
	}
	return c.out
}

// crowdedFile generates n subscriptions on every transport whose channels
// and rejection destinations are drawn from a few names per transport, so
// that many subscriptions send to one destination, several read it, names
// meet only after SQS's '.' to '_' and ".fifo" rules, and broker-native
// destinations (SQS redrive, Pub/Sub dead-letter topic) are among them.
func crowdedFile(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0))
	pools := map[string][]string{
		"sqs":      {"orders", "orders.dlq", "orders_dlq", "parked"},
		"gcp":      {"orders", "orders-dlq", "parked"},
		"rocketmq": {"orders", "orders-dlq", "parked"},
		"memory":   {"orders", "orders.dlq", "parked"},
	}
	transports := []string{"sqs", "gcp", "rocketmq", "memory"}
	var b strings.Builder
	b.WriteString("connections:\n  gcp: {projectId: p}\n  rocketmq: {endpoint: 127.0.0.1:8081}\nsubscriptions:\n")
	for i := range n {
		t := transports[r.IntN(len(transports))]
		pool := pools[t]
		name := func() string { return pool[r.IntN(len(pool))] }
		fmt.Fprintf(&b, "  - name: s%d\n    transport: %s\n    handler: {type: builtin, name: ack}\n    requeueCount: %d\n", i, t, r.IntN(5)-1)
		if t == "gcp" {
			fmt.Fprintf(&b, "    channelName: sub-%d\n    routingKey: %s\n", i, name())
		} else {
			fmt.Fprintf(&b, "    channelName: %s\n", name())
		}
		if r.IntN(3) > 0 {
			fmt.Fprintf(&b, "    deadLetterRoutingKey: %s\n", name())
		}
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "    invalidMessageRoutingKey: %s\n", name())
		}
		switch {
		case t == "sqs" && r.IntN(2) == 0:
			fmt.Fprintf(&b, "    sqs: {redrivePolicy: {deadLetterQueue: %s, maxReceiveCount: 5}}\n", name())
		case t == "gcp" && r.IntN(2) == 0:
			fmt.Fprintf(&b, "    gcp: {deadLetterPolicy: {topic: %s, maxDeliveryAttempts: 5}}\n", name())
		case t == "rocketmq":
			fmt.Fprintf(&b, "    rocketmq: {consumerGroup: g%d}\n", i)
		}
	}
	return b.String()
}

// The consumes-rejection-destination rule looks its pairs up in an index of
// the file's destinations instead of comparing every pair of subscriptions;
// it must find every pair the comparison finds, in the same order, through
// File and through SubscriptionIn, on files where many subscriptions share
// destinations.
func TestRejectionIndexFindsEveryPairwiseMatch(t *testing.T) {
	l := &Linter{}
	for seed := range uint64(20) {
		src := crowdedFile(60, seed)
		f, err := config.Parse("crowded.yaml", []byte(src), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("seed %d: the generated file does not parse: %v\n%s", seed, err, src)
		}
		var want []Finding
		for _, s := range f.Subscriptions {
			want = append(want, pairwiseRejectionConsumers(f, s)...)
		}
		if seed == 0 && len(want) < 100 {
			t.Fatalf("seed 0: only %d pairs; the generated file is not crowded enough to test the index", len(want))
		}
		Sort(want)
		got := only(l.File(f), RuleConsumesRejectionDestination)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: File found %d pairs, the pairwise comparison %d:\n got %s\nwant %s", seed, len(got), len(want), firstDiff(got, want), firstDiff(want, got))
		}
		for _, s := range f.Subscriptions {
			w := pairwiseRejectionConsumers(f, s)
			Sort(w)
			if g := only(l.SubscriptionIn(f, s), RuleConsumesRejectionDestination); !slices.Equal(g, w) {
				t.Fatalf("seed %d: SubscriptionIn(%s) found %d pairs, the pairwise comparison %d:\n got %s\nwant %s", seed, s.Name, len(g), len(w), firstDiff(g, w), firstDiff(w, g))
			}
		}
	}
}

// SubscriptionIn indexes a file once and reuses the index for the file's
// other subscriptions, but a different file, or the same file with a
// subscription added, is indexed afresh.
func TestSubscriptionInIndexFollowsTheFile(t *testing.T) {
	parse := func(src string) *config.File {
		f, err := config.Parse("f.yaml", []byte(src), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	head := "subscriptions:\n"
	reader := "  - {name: reader, transport: memory, channelName: dlq, handler: {type: builtin, name: ack}}\n"
	sender := "  - {name: sender, transport: memory, deadLetterRoutingKey: dlq, handler: {type: builtin, name: ack}}\n"
	l := &Linter{}
	alone := parse(head + reader)
	if fs := only(l.SubscriptionIn(alone, alone.Subscriptions[0]), RuleConsumesRejectionDestination); len(fs) != 0 {
		t.Fatalf("a reader alone: %d findings", len(fs))
	}
	both := parse(head + reader + sender)
	if fs := only(l.SubscriptionIn(both, both.Subscriptions[0]), RuleConsumesRejectionDestination); len(fs) != 1 {
		t.Fatalf("another file with a sender: %d findings, want 1 (the first file's index was reused)", len(fs))
	}
	alone.Subscriptions = append(alone.Subscriptions, both.Subscriptions[1])
	if fs := only(l.SubscriptionIn(alone, alone.Subscriptions[0]), RuleConsumesRejectionDestination); len(fs) != 1 {
		t.Fatalf("the first file with the sender added: %d findings, want 1 (a stale index was used)", len(fs))
	}
	if fs := l.SubscriptionIn(nil, alone.Subscriptions[0]); len(only(fs, RuleConsumesRejectionDestination)) != 0 {
		t.Fatalf("no file: %d pair findings", len(fs))
	}
}

func only(fs []Finding, rule string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.RuleID == rule {
			out = append(out, f)
		}
	}
	return out
}

// firstDiff shows the first finding of a that b lacks.
func firstDiff(a, b []Finding) string {
	for i, f := range a {
		if i >= len(b) || f != b[i] {
			return fmt.Sprintf("[%d] %s %s: %s", i, f.Pos, f.Subscription, f.Message)
		}
	}
	return "(none)"
}

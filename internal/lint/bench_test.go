package lint_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// benchFile generates a subscriptions file of n subscriptions cycling
// through the four transports, with native limits, leases and handlers set
// so that every rule is evaluated and some trip.
func benchFile(n int) []byte {
	var b strings.Builder
	b.WriteString("connections:\n  gcp:\n    projectId: bench\n  rocketmq:\n    endpoint: 127.0.0.1:8081\nsubscriptions:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: sub-%d\n    requeueCount: %d\n    deadLetterRoutingKey: sub-%d-dlq\n    bufferSize: %d\n", i, i%7-1, i, i%10+1)
		fmt.Fprintf(&b, "    handler:\n      type: exec\n      command: ./handle\n      timeout: %ds\n", 10+i%60)
		if i%5 == 0 {
			b.WriteString("    maxLeaseExtension: 0s\n")
		}
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "    transport: sqs\n    sqs:\n      visibilityTimeout: 30s\n      redrivePolicy:\n        deadLetterQueue: sub-%d-redrive\n        maxReceiveCount: %d\n", i, i%9+1)
		case 1:
			fmt.Fprintf(&b, "    transport: gcp\n    messagePumpType: reactor\n    noOfPerformers: %d\n    gcp:\n      mode: pull\n      ackDeadline: 30s\n      enableMessageOrdering: true\n", i%3+1)
			if i%8 == 1 {
				fmt.Fprintf(&b, "      deadLetterPolicy:\n        topic: sub-%d-native\n        maxDeliveryAttempts: 5\n", i)
			}
		case 2:
			b.WriteString("    transport: rocketmq\n    rocketmq:\n      consumerGroup: g\n      invisibleDuration: 30s\n")
		case 3:
			b.WriteString("    transport: memory\n    memory:\n      visibilityTimeout: 30s\n")
		}
	}
	return []byte(b.String())
}

// benchSizes are the file sizes, in subscriptions, every benchmark runs at:
// a small file, a large one and the 10,000 the lint target is set for.
var benchSizes = []int{100, 1000, 10000}

func noEnv(string) (string, bool) { return "", false }

// benchEach runs fn as one sub-benchmark "subs=N" per size of benchSizes,
// with the generated file of N subscriptions.
func benchEach(b *testing.B, fn func(b *testing.B, data []byte)) {
	for _, n := range benchSizes {
		data := benchFile(n)
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) { fn(b, data) })
	}
}

// BenchmarkParse parses the generated file: the baseline.
func BenchmarkParse(b *testing.B) {
	benchEach(b, func(b *testing.B, data []byte) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := config.Parse("bench.yaml", data, noEnv); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkParseLibraries splits the parse of the generated file into the
// YAML library's share and ours, and sets beside it another library
// measured as a prototype: goccy/go-yaml's lexer alone ("goccy-lex"), its
// lexer and parser ("goccy-tree", what config.Parse builds before its own
// walk; config.Parse less this is the pre-scan, the token checks and the
// decoder), config.Parse itself, and go.yaml.in/yaml/v3 composing the same
// file into its yaml.Node tree, which also keeps every node's line and
// column ("yamlv3-tree"). Only goccy's tree is decoded: the prototype
// measures the library, not a decoder written for it.
func BenchmarkParseLibraries(b *testing.B) {
	benchEach(b, func(b *testing.B, data []byte) {
		for _, c := range []struct {
			name  string
			parse func() error
		}{
			{"goccy-lex", func() error { lexer.Tokenize(string(data)); return nil }},
			{"goccy-tree", func() error { _, err := parser.Parse(lexer.Tokenize(string(data)), 0); return err }},
			{"config.Parse", func() error { _, err := config.Parse("bench.yaml", data, noEnv); return err }},
			{"yamlv3-tree", func() error { var n yamlv3.Node; return yamlv3.Unmarshal(data, &n) }},
		} {
			b.Run(c.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if err := c.parse(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}

// BenchmarkLint runs every rule over the parsed file (the rules alone).
func BenchmarkLint(b *testing.B) {
	l := lint.New(rules.Default())
	benchEach(b, func(b *testing.B, data []byte) {
		f, err := config.Parse("bench.yaml", data, noEnv)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		var n int
		for b.Loop() {
			n = len(l.File(f))
		}
		if n == 0 {
			b.Fatal("the generated file trips no rule")
		}
	})
}

// BenchmarkLintSource is what `brighter lint FILE` does: parse, then lint.
// Each op times its parse and its rules apart, and the benchmark reports
// lint/parse (the whole op over its parse: the target is at most 2) and
// rules/parse (the rules alone over the parse) from the same iterations.
func BenchmarkLintSource(b *testing.B) {
	l := lint.New(rules.Default())
	benchEach(b, func(b *testing.B, data []byte) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var parse, rules time.Duration
		for b.Loop() {
			t0 := time.Now()
			f, err := config.Parse("bench.yaml", data, noEnv)
			t1 := time.Now()
			if err != nil {
				b.Fatal(err)
			}
			if len(l.File(f)) == 0 {
				b.Fatal("the generated file trips no rule")
			}
			parse += t1.Sub(t0)
			rules += time.Since(t1)
		}
		if parse > 0 {
			b.ReportMetric(float64(parse+rules)/float64(parse), "lint/parse")
			b.ReportMetric(float64(rules)/float64(parse), "rules/parse")
		}
	})
}

// TestBenchFileParsesAndTrips keeps the benchmark's input honest.
func TestBenchFileParsesAndTrips(t *testing.T) {
	fs, f := lint.New(rules.Default()).Source("bench.yaml", benchFile(40), noEnv)
	if f == nil {
		t.Fatalf("generated file does not parse: %s", dump(fs))
	}
	seen := map[string]bool{}
	for _, x := range fs {
		seen[x.RuleID] = true
	}
	for _, id := range []string{lint.RuleBudgetZero, lint.RuleBudgetOutranked, lint.RuleBudgetCannotRunDown, lint.RuleHandlerTimeoutExceedsLease, lint.RuleBufferedWaitExceedsLease, lint.RuleOrderingWithPerformers} {
		if !seen[id] {
			t.Errorf("the benchmark file trips no %s", id)
		}
	}
}

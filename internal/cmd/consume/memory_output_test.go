package consume_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/consume"
	"github.com/brightergo/brighter/internal/transport"
)

// memoryDeadLetterFile writes, in a new directory, three messages and a
// subscriptions file of the given pump variant that defers each of them
// past requeueCount 1 into a dead-letter queue and stops when empty,
// writing what is left to output (relative to the directory); handler is
// the subscription's handler, DIR in it replaced by the directory. It
// returns the file's path.
func memoryDeadLetterFile(t *testing.T, variant, output, handler string) string {
	t.Helper()
	dir := t.TempDir()
	var seed strings.Builder
	for i := range 3 {
		fmt.Fprintf(&seed, `{"id":"m-%d","topic":"orders","messageType":"MT_EVENT","body":"{}"}`+"\n", i)
	}
	listenMust(t, os.WriteFile(filepath.Join(dir, "messages.jsonl"), []byte(seed.String()), 0o644))
	cfg := filepath.Join(dir, "brighter.yaml")
	listenMust(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`subscriptions:
  - name: orders
    transport: memory
    messagePumpType: %s
    requeueCount: 1
    requeueDelay: 0s
    emptyChannelDelay: 10ms
    deadLetterRoutingKey: orders.dlq
    handler: %s
    memory: {seed: messages.jsonl, output: %s, stopWhenEmpty: true}
`, variant, strings.ReplaceAll(handler, "DIR", dir), output)), 0o644))
	return cfg
}

// runMemoryConsume runs `brighter consume --config cfg` in process to its
// end and returns its exit code and stderr.
func runMemoryConsume(t *testing.T, cfg string) (int, string) {
	t.Helper()
	stderr := &cmdtest.LockedBuffer{}
	code := run(context.Background(), &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: stderr, Getenv: os.LookupEnv},
		[]string{"consume", "--config", cfg, "--log-format", "json"})
	return code, stderr.String()
}

// TestConsumeMemoryOutput_UnwritablePathRefusedAtStartUp: a memory.output
// in a directory that does not exist is a configuration error found at
// start-up (exit 2, naming the field's position and the directory), before
// any message moves: it was found only at stop, after `consume stopped`,
// with exit 0 and the dead-lettered messages lost.
func TestConsumeMemoryOutput_UnwritablePathRefusedAtStartUp(t *testing.T) {
	cfg := memoryDeadLetterFile(t, "reactor", "/nonexistent/dir/out.jsonl", "{type: builtin, name: defer}")
	code, stderr := runMemoryConsume(t, cfg)
	if code != cmdutil.ExitUsage {
		t.Fatalf("consume exited %d, want %d; stderr:\n%s", code, cmdutil.ExitUsage, stderr)
	}
	for _, want := range []string{cfg + ":10:", `memory.output \"/nonexistent/dir/out.jsonl\": its directory /nonexistent/dir does not exist`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "memory channel seeded") || strings.Contains(stderr, consume.LogConsumeStopped) {
		t.Errorf("consume went on past the bad memory.output:\n%s", stderr)
	}
}

// TestConsumeMemoryOutput_WriteFailureAtStopFails: when memory.output
// cannot be written at stop (its directory, there at start-up, removed by
// the handler), consume exits 1 with the error naming the subscription
// and memory.output, and does not log `consume stopped`: it exited 0
// with the dead-lettered messages lost. With the directory left alone,
// the same run exits 0 and the output holds the three dead letters. Both
// pump variants.
func TestConsumeMemoryOutput_WriteFailureAtStopFails(t *testing.T) {
	for _, variant := range []string{"reactor", "proactor"} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			// exit 75: defer (docs/handlers.md).
			cfg := memoryDeadLetterFile(t, variant, "out/left.jsonl", `{type: exec, command: sh, args: ["-c", "rm -rf DIR/out; exit 75"]}`)
			listenMust(t, os.Mkdir(filepath.Join(filepath.Dir(cfg), "out"), 0o755))
			code, stderr := runMemoryConsume(t, cfg)
			if code != cmdutil.ExitFailure {
				t.Fatalf("consume exited %d, want %d; stderr:\n%s", code, cmdutil.ExitFailure, stderr)
			}
			if !strings.Contains(stderr, "subscription orders: close channel: memory.output: open ") || strings.Contains(stderr, consume.LogConsumeStopped) {
				t.Errorf("stderr does not end with the close's failure alone:\n%s", stderr)
			}

			cfg = memoryDeadLetterFile(t, variant, "out/left.jsonl", "{type: builtin, name: defer}")
			listenMust(t, os.Mkdir(filepath.Join(filepath.Dir(cfg), "out"), 0o755))
			if code, stderr := runMemoryConsume(t, cfg); code != cmdutil.ExitOK || !strings.Contains(stderr, consume.LogConsumeStopped) {
				t.Fatalf("consume exited %d, want 0 and %q; stderr:\n%s", code, consume.LogConsumeStopped, stderr)
			}
			b, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), "out", "left.jsonl"))
			listenMust(t, err)
			if n := strings.Count(string(b), `"topic":"orders.dlq"`); n != 3 {
				t.Errorf("memory.output holds %d dead letters, want 3:\n%s", n, b)
			}
		})
	}
}

// TestConsumeMemory_DiscardedDestinationsWarned (both pump variants): a
// memory subscription with no memory.output that dead-letters its three
// messages exits 0 with a Warning saying the three messages its
// dead-letter queue holds are discarded with the process (there was
// nothing saying they are gone).
func TestConsumeMemory_DiscardedDestinationsWarned(t *testing.T) {
	for _, variant := range []string{"reactor", "proactor"} {
		t.Run(variant, func(t *testing.T) {
			cfg := memoryDeadLetterFile(t, variant, "out.jsonl", "{type: builtin, name: defer}")
			data, err := os.ReadFile(cfg)
			listenMust(t, err)
			listenMust(t, os.WriteFile(cfg, []byte(strings.Replace(string(data), "output: out.jsonl, ", "", 1)), 0o644))
			code, stderr := runMemoryConsume(t, cfg)
			if code != cmdutil.ExitOK {
				t.Fatalf("consume exited %d, want 0; stderr:\n%s", code, stderr)
			}
			var rec map[string]any
			for _, l := range strings.Split(stderr, "\n") {
				if strings.Contains(l, transport.LogMemoryDiscarded) {
					listenMust(t, json.Unmarshal([]byte(l), &rec))
				}
			}
			if rec == nil || rec["level"] != "WARN" || rec["messages"] != float64(3) || fmt.Sprint(rec["queues"]) != "map[orders.dlq:3]" {
				t.Fatalf("no Warning that orders.dlq's 3 messages are discarded (%v); stderr:\n%s", rec, stderr)
			}
		})
	}
}

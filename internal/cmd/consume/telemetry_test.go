package consume_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/consume"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/telemetry"
)

// testSpanExporterName is the OTEL_TRACES_EXPORTER value that selects
// testSpans, registered with autoexport so consume is driven by the
// environment alone.
const testSpanExporterName = "brighter-test-memory"

var (
	testSpans        = tracetest.NewInMemoryExporter()
	registerExporter sync.Once
)

// keepSpans is testSpans without the Shutdown that would clear it.
type keepSpans struct{ *tracetest.InMemoryExporter }

func (keepSpans) Shutdown(context.Context) error { return nil }

const consumeTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestConsumeTracesEveryDelivery runs `brighter consume` on the memory
// transport with OTEL_TRACES_EXPORTER naming an in-memory exporter and an
// exec handler, for an acked, a deferred-then-acked and a dead-lettered
// message in each pump variant, and checks the span tree: a process span
// per delivery linked to the producer, a handle child whose context the
// exec handler got as TRACEPARENT, a send child for the dead-letter
// publish, and a dead-letter copy that keeps the producer's traceparent.
func TestConsumeTracesEveryDelivery(t *testing.T) {
	registerExporter.Do(func() {
		autoexport.RegisterSpanExporter(testSpanExporterName, func(context.Context) (sdktrace.SpanExporter, error) {
			return keepSpans{testSpans}, nil
		})
	})
	testSpans.Reset()
	for _, v := range []string{telemetry.EnvSDKDisabled, telemetry.EnvOTLPEndpoint, telemetry.EnvOTLPTracesEndpoint, telemetry.EnvOTLPMetricsEndpoint} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv(telemetry.EnvTracesExporter, testSpanExporterName)
	t.Setenv(telemetry.EnvMetricsExporter, "none")

	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("subscriptions:\n")
	for _, variant := range []string{"reactor", "proactor"} {
		for _, kind := range []string{"acked", "retried", "dead"} {
			name := kind + "-" + variant
			fmt.Fprintf(&cfg, `  - name: %[1]s
    transport: memory
    messagePumpType: %[2]s
    requeueCount: 3
    deadLetterRoutingKey: %[1]s-dlq
    emptyChannelDelay: 10ms
    handler: {type: exec, command: ./handler.sh}
    memory: {seed: %[1]s.jsonl, output: out-%[1]s.jsonl, stopWhenEmpty: true}
`, name, variant)
			seed := fmt.Sprintf(`{"id":%q,"topic":%q,"messageType":"MT_EVENT","traceParent":%q,"body":"{}"}`+"\n", name+"-1", name, consumeTraceParent)
			if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(seed), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(name, text string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("brighter.yaml", cfg.String(), 0o644)
	// The handler records what it was given and decides by message id.
	write("handler.sh", `#!/bin/sh
echo "$BRIGHTER_MESSAGE_ID $BRIGHTER_HANDLED_COUNT $TRACEPARENT" >> "$(dirname "$0")/seen.txt"
case "$BRIGHTER_MESSAGE_ID" in
  acked-*) exit 0 ;;
  retried-*) [ "$BRIGHTER_HANDLED_COUNT" = 0 ] && exit 75; exit 0 ;;
  *) echo "order has no customer" >&2; exit 1 ;;
esac
`, 0o755)
	// "dead" messages fail every time: deferred until requeueCount 3, then
	// dead-lettered.

	var stderr bytes.Buffer
	streams := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &stderr, Getenv: os.LookupEnv}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if code := run(ctx, streams, []string{"consume", "--config", filepath.Join(dir, "brighter.yaml")}); code != cmdutil.ExitOK {
		t.Fatalf("consume exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), consume.LogTelemetryOn) {
		t.Errorf("no %q log line", consume.LogTelemetryOn)
	}

	// What each handler run saw: message id, count, TRACEPARENT.
	seen := map[string]string{}
	data, err := os.ReadFile(filepath.Join(dir, "seen.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 {
			seen[f[0]+"/"+f[1]] = f[2]
		}
	}

	spans := testSpans.GetSpans()
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	type counts struct{ process, handle, send int }
	got := map[string]*counts{}
	// countsOf returns the counts of the message a process span handled.
	countsOf := func(process tracetest.SpanStub) (string, *counts) {
		id := ""
		for _, a := range process.Attributes {
			if a.Key == "messaging.message.id" {
				id = a.Value.AsString()
			}
		}
		if got[id] == nil {
			got[id] = &counts{}
		}
		return id, got[id]
	}
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name, "process "):
			id, c := countsOf(s)
			c.process++
			if len(s.Links) != 1 || s.Links[0].SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("%s: process span links %+v, want the producer's", id, s.Links)
			}
		case s.Name == telemetry.SpanHandle || strings.HasPrefix(s.Name, "send "):
			parent, ok := byID[s.Parent.SpanID()]
			if !ok || !strings.HasPrefix(parent.Name, "process ") {
				t.Errorf("span %s: parent is not a process span", s.Name)
				continue
			}
			id, c := countsOf(parent)
			if s.Name == telemetry.SpanHandle {
				c.handle++
				// The exec handler got this span's context as TRACEPARENT.
				want := "00-" + s.SpanContext.TraceID().String() + "-" + s.SpanContext.SpanID().String() + "-01"
				var found bool
				for k, v := range seen {
					if strings.HasPrefix(k, id+"/") && v == want {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: no handler run saw TRACEPARENT %s (seen %v)", id, want, seen)
				}
			} else {
				c.send++
				if s.Name != "send "+strings.TrimSuffix(id, "-1")+"-dlq" {
					t.Errorf("%s: send span %q", id, s.Name)
				}
			}
		}
	}
	for _, variant := range []string{"reactor", "proactor"} {
		for kind, want := range map[string]counts{"acked": {1, 1, 0}, "retried": {2, 2, 0}, "dead": {3, 3, 1}} {
			id := kind + "-" + variant + "-1"
			if g := got[id]; g == nil || *g != want {
				t.Errorf("%s: process/handle/send spans %+v, want %+v", id, g, want)
			}
		}
		// The dead-letter copy keeps the producer's trace context.
		out, err := os.ReadFile(filepath.Join(dir, "out-dead-"+variant+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var kept bool
		for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			m, err := message.UnmarshalRecordJSON(line)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			kept = kept || (m.Header.Topic == "dead-"+variant+"-dlq" && m.Header.TraceParent == consumeTraceParent)
		}
		if !kept {
			t.Errorf("dead-%s: no dead-letter copy with the producer's traceparent in %s", variant, out)
		}
	}
}

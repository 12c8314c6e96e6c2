package telemetry_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/telemetry"
)

// discard is a span exporter that drops what it is given: the benchmark
// measures the instrumentation and the SDK's batching, not a network.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkPumpTelemetry runs b.N acked messages (each carrying a
// traceparent) through a Reactor pump over the memory transport, with no
// observers but telemetry's. One op is one message. "baseline" has no
// telemetry at all; "off" is consume's wiring when the environment asks
// for nothing (a nil *Telemetry: Wrap returns the handler, no observer),
// so its allocs/op must equal baseline's; "on" records a process and a
// handle span per message through the SDK's batch span processor into a
// discarding exporter, plus the consumer metrics into a manual reader.
func BenchmarkPumpTelemetry(b *testing.B) {
	for _, mode := range []string{"baseline", "off", "on"} {
		b.Run(mode, func(b *testing.B) {
			var tel *telemetry.Telemetry
			var shutdown func()
			if mode == "on" {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				var err error
				tel, err = telemetry.New(tp, mp, []telemetry.Subscription{{Name: "bench", System: "memory", Destination: "bench"}})
				if err != nil {
					b.Fatal(err)
				}
				shutdown = func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }
			}
			h := func(context.Context, *message.Message) pump.Result { return pump.Result{Outcome: pump.Ack} }
			var handler pump.Handler = h
			var observers []pump.Observer
			if mode != "baseline" {
				handler, observers = tel.Wrap(h), tel.Observers()
			}
			br := memory.NewBroker(false)
			c := br.NewConsumer(memory.ConsumerOptions{Queue: "bench", BufferSize: 10, StopWhenEmpty: true, Logger: slog.New(slog.DiscardHandler)})
			p, err := pump.New(c, handler, pump.Options{Subscription: "bench", Variant: pump.Reactor, NoOfPerformers: 1, BufferSize: 10,
				TimeOut: 10 * time.Millisecond, RequeueCount: -1}, observers...)
			if err != nil {
				b.Fatal(err)
			}
			body := []byte(`{"n":1}`)
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := min(10000, b.N-done)
				b.StopTimer()
				for i := done; i < done+n; i++ {
					m := message.New("m"+strconv.Itoa(i), "bench", message.MTEvent, body)
					m.Header.TraceParent = traceParent
					if err := br.Publish(context.Background(), "bench", m); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := p.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				done += n
			}
			b.StopTimer()
			if shutdown != nil {
				shutdown()
			}
		})
	}
}

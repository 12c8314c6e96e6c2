package telemetry_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/handler"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/telemetry"
)

// TestHTTPHandlerContinuesTheTrace wraps the real http handler and checks,
// in both pump variants, that the user's endpoint receives the handle
// span's context as the traceparent and tracestate headers, not the
// producer's, and that its 200 acknowledges the message.
func TestHTTPHandlerContinuesTheTrace(t *testing.T) {
	for _, variant := range []pump.Variant{pump.Reactor, pump.Proactor} {
		t.Run(string(variant), func(t *testing.T) {
			var mu sync.Mutex
			var gotParent, gotState string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				gotParent, gotState = r.Header.Get("traceparent"), r.Header.Get("tracestate")
				mu.Unlock()
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			logger := slog.New(slog.DiscardHandler)
			h, err := handler.New(config.Handler{Type: config.HandlerHTTP, URL: srv.URL, Timeout: 10 * time.Second}, logger)
			if err != nil {
				t.Fatal(err)
			}
			spans := tracetest.NewInMemoryExporter()
			tel, err := telemetry.New(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)), metricnoop.NewMeterProvider(),
				[]telemetry.Subscription{{Name: "orders", System: "memory", Destination: "orders", HandlerType: "http"}})
			if err != nil {
				t.Fatal(err)
			}
			br := memory.NewBroker(false)
			m := message.New("m-1", "orders", message.MTEvent, []byte(`{}`))
			m.Header.TraceParent, m.Header.TraceState = traceParent, traceState
			if err := br.Publish(context.Background(), "orders", m); err != nil {
				t.Fatal(err)
			}
			c := br.NewConsumer(memory.ConsumerOptions{Queue: "orders", StopWhenEmpty: true, Logger: logger})
			p, err := pump.New(c, tel.Wrap(h), pump.Options{Subscription: "orders", Variant: variant, NoOfPerformers: 1, BufferSize: 1,
				TimeOut: 50 * time.Millisecond, RequeueCount: -1}, tel.Observers()...)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := p.Run(ctx); err != nil {
				t.Fatal(err)
			}
			var handle *tracetest.SpanStub
			for _, s := range spans.GetSpans() {
				if s.Name == telemetry.SpanHandle {
					handle = &s
				}
			}
			if handle == nil {
				t.Fatal("no handle span")
			}
			want := "00-" + handle.SpanContext.TraceID().String() + "-" + handle.SpanContext.SpanID().String() + "-01"
			mu.Lock()
			defer mu.Unlock()
			// The tracestate is the handle span's too: the producer's vendor
			// state belongs to the producer's trace, which the process span
			// links to rather than continues.
			if wantState := handle.SpanContext.TraceState().String(); gotParent != want || gotState != wantState {
				t.Errorf("endpoint got traceparent %q tracestate %q, want the handle span's %q and %q", gotParent, gotState, want, wantState)
			}
			if br.Depth("orders") != 0 {
				t.Errorf("the message was not acknowledged after the endpoint's 200")
			}
		})
	}
}

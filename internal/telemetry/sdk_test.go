package telemetry_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/telemetry"
)

// collector is an in-process OTLP trace collector stub: the gRPC
// TraceService and the HTTP /v1/traces endpoint, recording every request.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu   sync.Mutex
	reqs []*collectortrace.ExportTraceServiceRequest
}

// Export implements the gRPC TraceService.
func (c *collector) Export(_ context.Context, r *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r)
	c.mu.Unlock()
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// ServeHTTP implements OTLP/HTTP with protobuf bodies.
func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := &collectortrace.ExportTraceServiceRequest{}
	if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	_, _ = c.Export(r.Context(), req)
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// spans returns the exported spans' names with their service.name.
func (c *collector) spans() (names []string, services map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	services = map[string]bool{}
	for _, r := range c.reqs {
		for _, rs := range r.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					services[a.GetValue().GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
	}
	return names, services
}

// clearOTelEnv unsets every OTEL_ variable of the test's environment for
// the test.
func clearOTelEnv(t *testing.T) {
	for _, v := range []string{telemetry.EnvSDKDisabled, telemetry.EnvTracesExporter, telemetry.EnvMetricsExporter, telemetry.EnvOTLPEndpoint,
		telemetry.EnvOTLPTracesEndpoint, telemetry.EnvOTLPMetricsEndpoint, "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_LOGS_EXPORTER"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

// pumpOne runs one acked message through a pump wired to p.
func pumpOne(t *testing.T, p *telemetry.Providers) {
	t.Helper()
	tel, err := telemetry.New(p.TracerProvider, p.MeterProvider, []telemetry.Subscription{{Name: "orders", System: "memory", Destination: "orders"}})
	if err != nil {
		t.Fatal(err)
	}
	br := memory.NewBroker(false)
	m := message.New("m-1", "orders", message.MTEvent, []byte(`{}`))
	m.Header.TraceParent = traceParent
	if err := br.Publish(context.Background(), "orders", m); err != nil {
		t.Fatal(err)
	}
	c := br.NewConsumer(memory.ConsumerOptions{Queue: "orders", StopWhenEmpty: true, Logger: slog.New(slog.DiscardHandler)})
	pp, err := pump.New(c, tel.Wrap(func(context.Context, *message.Message) pump.Result { return pump.Result{Outcome: pump.Ack} }),
		pump.Options{Subscription: "orders", Variant: pump.Reactor, NoOfPerformers: 1, BufferSize: 1, TimeOut: 50 * time.Millisecond, RequeueCount: -1},
		tel.Observers()...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pp.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestOTLPExport exports over OTLP, gRPC and HTTP, to an in-process
// collector stub configured only through the standard OTEL_* variables,
// and checks the delivery's spans arrive with brighter's service name.
func TestOTLPExport(t *testing.T) {
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(protocol, func(t *testing.T) {
			clearOTelEnv(t)
			col := &collector{}
			var endpoint string
			if protocol == "grpc" {
				lis, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				srv := grpc.NewServer()
				collectortrace.RegisterTraceServiceServer(srv, col)
				go func() { _ = srv.Serve(lis) }()
				t.Cleanup(srv.Stop)
				endpoint = "http://" + lis.Addr().String()
			} else {
				srv := httptest.NewServer(col)
				t.Cleanup(srv.Close)
				endpoint = srv.URL
			}
			t.Setenv(telemetry.EnvOTLPEndpoint, endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv(telemetry.EnvMetricsExporter, "none")
			p, err := telemetry.FromEnv(context.Background(), os.LookupEnv, "v0.0.0-test")
			if err != nil {
				t.Fatal(err)
			}
			if p == nil || !p.Traces || p.Metrics {
				t.Fatalf("FromEnv with an OTLP endpoint and metrics none = %+v, want traces only", p)
			}
			pumpOne(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := p.Shutdown(ctx); err != nil { // flushes the batch
				t.Fatalf("shutdown: %v", err)
			}
			names, services := col.spans()
			want := map[string]bool{"process orders": false, telemetry.SpanHandle: false}
			for _, n := range names {
				if _, ok := want[n]; ok {
					want[n] = true
				}
			}
			for n, ok := range want {
				if !ok {
					t.Errorf("span %q not exported; got %v", n, names)
				}
			}
			if !services[telemetry.DefaultServiceName] {
				t.Errorf("service.name %v, want %s", services, telemetry.DefaultServiceName)
			}
		})
	}
}

// TestFromEnvOffByDefault checks telemetry is off without OTEL_*
// variables, off with OTEL_SDK_DISABLED=true whatever else is set, and
// per signal off with its exporter "none".
func TestFromEnvOffByDefault(t *testing.T) {
	cases := []struct {
		name            string
		env             map[string]string
		traces, metrics bool
	}{
		{"nothing set", nil, false, false},
		{"sdk disabled", map[string]string{telemetry.EnvSDKDisabled: "TRUE", telemetry.EnvOTLPEndpoint: "http://127.0.0.1:1", telemetry.EnvTracesExporter: "otlp"}, false, false},
		{"endpoint", map[string]string{telemetry.EnvOTLPEndpoint: "http://127.0.0.1:1"}, true, true},
		{"endpoint, traces none", map[string]string{telemetry.EnvOTLPEndpoint: "http://127.0.0.1:1", telemetry.EnvTracesExporter: "none"}, false, true},
		{"traces exporter console", map[string]string{telemetry.EnvTracesExporter: "console"}, true, false},
		{"metrics endpoint only", map[string]string{telemetry.EnvOTLPMetricsEndpoint: "http://127.0.0.1:1"}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearOTelEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			p, err := telemetry.FromEnv(context.Background(), os.LookupEnv, "test")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown(context.Background())
			if !tc.traces && !tc.metrics {
				if p != nil {
					t.Fatalf("FromEnv = %+v, want nil (off)", p)
				}
				return
			}
			if p == nil || p.Traces != tc.traces || p.Metrics != tc.metrics {
				t.Fatalf("FromEnv = %+v, want traces %v metrics %v", p, tc.traces, tc.metrics)
			}
		})
	}
}

// TestNilTelemetryIsOff checks the off wiring adds nothing: Wrap returns
// the very handler and Observers is empty.
func TestNilTelemetryIsOff(t *testing.T) {
	var tel *telemetry.Telemetry
	called := false
	h := tel.Wrap(func(context.Context, *message.Message) pump.Result { called = true; return pump.Result{} })
	h(context.Background(), message.New("m", "q", message.MTEvent, nil))
	if !called || len(tel.Observers()) != 0 {
		t.Fatalf("nil Telemetry: handler called %v, observers %d", called, len(tel.Observers()))
	}
}

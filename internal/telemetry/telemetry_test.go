package telemetry_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/telemetry"
)

// The producer's span context the test messages carry.
const (
	producerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	producerSpan  = "00f067aa0ba902b7"
	traceParent   = "00-" + producerTrace + "-" + producerSpan + "-01"
	traceState    = "vendor=producer"
)

// Test message ids; the handler decides by id.
const (
	idAcked    = "acked-1"    // acked at once
	idRetried  = "retried-1"  // deferred once, then acked
	idRejected = "rejected-1" // the handler rejects: dead-lettered
	idPoison   = "poison-1"   // always deferred: the budget (2) dead-letters it
)

// fixture runs one pump over the memory transport with telemetry recorded
// in memory.
type fixture struct {
	spans   *tracetest.InMemoryExporter
	metrics *sdkmetric.ManualReader
	broker  *memory.Broker
	// seen is the traceparent each delivery's handler saw, by message id
	// and delivery count.
	mu   sync.Mutex
	seen map[string]string
}

func runPump(t *testing.T, variant pump.Variant) *fixture {
	t.Helper()
	f := &fixture{spans: tracetest.NewInMemoryExporter(), metrics: sdkmetric.NewManualReader(), broker: memory.NewBroker(false), seen: map[string]string{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(f.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.metrics))
	tel, err := telemetry.New(tp, mp, []telemetry.Subscription{{Name: "orders", System: "memory", Destination: "orders", HandlerType: "builtin"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{idAcked, idRetried, idRejected, idPoison} {
		m := message.New(id, "orders", message.MTEvent, []byte(`{"id":"`+id+`"}`))
		m.Header.TraceParent, m.Header.TraceState = traceParent, traceState
		if err := f.broker.Publish(context.Background(), "orders", m); err != nil {
			t.Fatal(err)
		}
	}
	c := f.broker.NewConsumer(memory.ConsumerOptions{Queue: "orders", BufferSize: 4, DeadLetter: "orders-dlq", StopWhenEmpty: true, Logger: slog.New(slog.DiscardHandler)})
	h := func(_ context.Context, m *message.Message) pump.Result {
		f.mu.Lock()
		f.seen[fmt.Sprintf("%s/%d", m.Header.MessageID, m.Header.HandledCount)] = m.Header.TraceParent
		f.mu.Unlock()
		switch m.Header.MessageID {
		case idAcked:
			return pump.Result{Outcome: pump.Ack}
		case idRetried:
			if m.Header.HandledCount == 0 {
				return pump.Result{Outcome: pump.Defer}
			}
			return pump.Result{Outcome: pump.Ack}
		case idRejected:
			return pump.Result{Outcome: pump.Reject, Reason: "order has no customer"}
		}
		return pump.Result{Outcome: pump.Defer}
	}
	p, err := pump.New(c, tel.Wrap(h), pump.Options{Subscription: "orders", Variant: variant, NoOfPerformers: 2, BufferSize: 4,
		TimeOut: 50 * time.Millisecond, RequeueCount: 2}, tel.Observers()...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the pump did not stop by itself within 30s")
	}
	return f
}

func attrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range kvs {
		out[kv.Key] = kv.Value
	}
	return out
}

// delivery is one process span with its children.
type delivery struct {
	process tracetest.SpanStub
	handle  *tracetest.SpanStub
	send    *tracetest.SpanStub
}

// tree groups the recorded spans into deliveries by message id, in
// delivery-count order, and fails on a span that fits nowhere.
func tree(t *testing.T, spans tracetest.SpanStubs) map[string][]*delivery {
	t.Helper()
	byID := map[trace.SpanID]*delivery{}
	out := map[string][]*delivery{}
	for _, s := range spans {
		if s.Name == "process orders" {
			d := &delivery{process: s}
			byID[s.SpanContext.SpanID()] = d
			id := attrs(s.Attributes)["messaging.message.id"].AsString()
			out[id] = append(out[id], d)
		}
	}
	for i := range spans {
		s := &spans[i]
		if s.Name == "process orders" {
			continue
		}
		d, ok := byID[s.Parent.SpanID()]
		if !ok || s.Parent.TraceID() != d.process.SpanContext.TraceID() {
			t.Errorf("span %q has no process span as parent", s.Name)
			continue
		}
		switch {
		case s.Name == telemetry.SpanHandle && d.handle == nil:
			d.handle = s
		case s.Name == "send orders-dlq" && d.send == nil:
			d.send = s
		default:
			t.Errorf("unexpected span %q under %s", s.Name, attrs(d.process.Attributes)["messaging.message.id"].AsString())
		}
	}
	for _, ds := range out {
		for i := 1; i < len(ds); i++ { // order by the count at receipt
			for j := i; j > 0 && ds[j].process.StartTime.Before(ds[j-1].process.StartTime); j-- {
				ds[j], ds[j-1] = ds[j-1], ds[j]
			}
		}
	}
	return out
}

// TestSpanTree_AckedDeferredDeadLettered checks, in both pump variants, the
// span tree of an acked, a deferred-then-acked and two dead-lettered
// messages (handler Reject, budget exhausted, R-4/R-16): a consumer
// "process" span per delivery linked to the producer's traceparent, a
// "handle" child whose context the handler saw as the message's
// traceparent, a "send" producer child for the dead-letter publish, the
// messaging attributes and ours, and a dead-letter copy that keeps the
// producer's trace context.
func TestSpanTree_AckedDeferredDeadLettered(t *testing.T) {
	for _, variant := range []pump.Variant{pump.Reactor, pump.Proactor} {
		t.Run(string(variant), func(t *testing.T) {
			f := runPump(t, variant)
			deliveries := tree(t, f.spans.GetSpans())
			want := map[string][]string{ // settlement per delivery
				idAcked:    {"acknowledged"},
				idRetried:  {"deferred", "acknowledged"},
				idRejected: {"rejected"},
				idPoison:   {"deferred", "rejected"},
			}
			for id, settlements := range want {
				ds := deliveries[id]
				if len(ds) != len(settlements) {
					t.Errorf("%s: %d process spans, want %d", id, len(ds), len(settlements))
					continue
				}
				for i, d := range ds {
					checkDelivery(t, f, id, i, settlements[i], d)
				}
			}
			// The dead-letter copies keep the producer's trace context, so a
			// replay links to the same producer span.
			dlq := f.broker.Snapshot("orders-dlq")
			if len(dlq) != 2 {
				t.Fatalf("dead-letter queue holds %d messages, want 2", len(dlq))
			}
			for _, m := range dlq {
				if m.Header.TraceParent != traceParent || m.Header.TraceState != traceState {
					t.Errorf("dead-letter copy of %s carries %q/%q, want the producer's %q/%q", m.Header.MessageID, m.Header.TraceParent, m.Header.TraceState, traceParent, traceState)
				}
			}
			checkMetrics(t, f)
		})
	}
}

func checkDelivery(t *testing.T, f *fixture, id string, count int, settlement string, d *delivery) {
	t.Helper()
	p := d.process
	a := attrs(p.Attributes)
	where := fmt.Sprintf("%s delivery %d", id, count)
	if p.SpanKind != trace.SpanKindConsumer {
		t.Errorf("%s: process span kind %v, want consumer", where, p.SpanKind)
	}
	for k, v := range map[attribute.Key]string{
		"messaging.system": "memory", "messaging.destination.name": "orders", "messaging.message.id": id,
		"messaging.operation.type": "process", "messaging.operation.name": "process", "brighter.subscription": "orders",
		"brighter.settlement": settlement,
	} {
		if got := a[k].AsString(); got != v {
			t.Errorf("%s: %s = %q, want %q", where, k, got, v)
		}
	}
	if a["brighter.budget"].AsInt64() != 2 {
		t.Errorf("%s: brighter.budget = %v, want 2", where, a["brighter.budget"])
	}
	// The count after the settlement: a Defer adds one.
	wantCount := int64(count)
	if settlement == "deferred" || (id == idPoison && settlement == "rejected") {
		wantCount++
	}
	if got := a["brighter.delivery_count"].AsInt64(); got != wantCount {
		t.Errorf("%s: brighter.delivery_count = %d, want %d", where, got, wantCount)
	}
	if len(p.Links) != 1 || p.Links[0].SpanContext.TraceID().String() != producerTrace || p.Links[0].SpanContext.SpanID().String() != producerSpan ||
		p.Links[0].SpanContext.TraceState().String() != traceState {
		t.Errorf("%s: links %+v, want one to the producer %s/%s", where, p.Links, producerTrace, producerSpan)
	}
	if p.SpanContext.TraceID().String() == producerTrace {
		t.Errorf("%s: the process span is in the producer's trace; it should link to it, not continue it", where)
	}

	// The handler call, and what the handler saw.
	if d.handle == nil {
		t.Errorf("%s: no handle span", where)
		return
	}
	if d.handle.StartTime.Before(p.StartTime) || d.handle.EndTime.After(p.EndTime) {
		t.Errorf("%s: handle span [%v, %v] outside process span [%v, %v]", where, d.handle.StartTime, d.handle.EndTime, p.StartTime, p.EndTime)
	}
	f.mu.Lock()
	seen := f.seen[fmt.Sprintf("%s/%d", id, count)]
	f.mu.Unlock()
	if want := "00-" + d.handle.SpanContext.TraceID().String() + "-" + d.handle.SpanContext.SpanID().String() + "-01"; seen != want {
		t.Errorf("%s: the handler saw traceparent %q, want the handle span's %q", where, seen, want)
	}

	// The rejection publish.
	if settlement != "rejected" {
		if d.send != nil {
			t.Errorf("%s: a send span on a delivery that was not rejected", where)
		}
		if a["brighter.outcome"].AsString() == "" {
			t.Errorf("%s: no brighter.outcome", where)
		}
		return
	}
	if a["brighter.rejection.reason"].AsString() != "DeliveryError" || a["brighter.rejection.route"].AsString() != "dead-letter" {
		t.Errorf("%s: rejection %v %v, want DeliveryError dead-letter", where, a["brighter.rejection.reason"], a["brighter.rejection.route"])
	}
	if id == idPoison && !a["brighter.budget_exhausted"].AsBool() {
		t.Errorf("%s: brighter.budget_exhausted not set", where)
	}
	if d.send == nil {
		t.Errorf("%s: no send span for the dead-letter publish", where)
		return
	}
	s := attrs(d.send.Attributes)
	if d.send.SpanKind != trace.SpanKindProducer || s["messaging.destination.name"].AsString() != "orders-dlq" || s["messaging.operation.type"].AsString() != "send" ||
		s["brighter.rejection.reason"].AsString() != "DeliveryError" {
		t.Errorf("%s: send span %v %v", where, d.send.SpanKind, d.send.Attributes)
	}
	if d.send.StartTime.Before(d.handle.EndTime) || d.send.EndTime.After(p.EndTime) || d.send.EndTime.Before(d.send.StartTime) {
		t.Errorf("%s: send span [%v, %v] not between the handler's end %v and the process end %v", where, d.send.StartTime, d.send.EndTime, d.handle.EndTime, p.EndTime)
	}
}

// checkMetrics checks the conventions' consumer metrics: 6 deliveries
// consumed and processed, 2 rejection publishes.
func checkMetrics(t *testing.T, f *fixture) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := f.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[m.Name] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[m.Name] += int64(p.Count)
				}
			}
		}
	}
	for name, n := range map[string]int64{"messaging.client.consumed.messages": 6, "messaging.process.duration": 6,
		"messaging.client.sent.messages": 2, "messaging.client.operation.duration": 2} {
		if got[name] != n {
			t.Errorf("%s = %d, want %d (all: %v)", name, got[name], n, got)
		}
	}
}

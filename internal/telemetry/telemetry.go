// Package telemetry traces and measures brighter consume with OpenTelemetry,
// following the messaging semantic conventions, without the
// message pump depending on OpenTelemetry: a pump.Middleware wraps the handler
// and a pump.Observer follows the pump's events.
//
// Per delivery it records a consumer span "process <destination>" from the
// dispatch to the settlement, linked to the producer's span context carried
// on the message (W3C traceparent/tracestate, Header.TraceParent and
// TraceState), with a child span "handle" around the handler call and,
// when the message was rejected to a destination, a producer child span
// "send <destination>" covering the pump's Reject call (the publish of the
// routed copy, then the settle of the original). The handler sees a copy
// of the message whose TraceParent and TraceState are the "handle" span's,
// so the http handler's traceparent header and the exec handler's
// TRACEPARENT/TRACESTATE environment continue the trace in the user's code.
// The message itself is not changed, so the routed (dead-letter) copy keeps
// the producer's trace context and a replay links to the same producer.
//
// Metrics are the conventions' consumer metrics:
// messaging.client.consumed.messages, messaging.process.duration and, for
// rejection publishes, messaging.client.sent.messages and
// messaging.client.operation.duration.
//
// Off (the default, see FromEnv) nothing of this package is wired in and
// the pump runs as without it: no allocation is added per message.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/broker, internal/message, internal/pump
//
// Must not import: cmd/..., internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...,
// internal/observe
package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/messagingconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// ScopeName is the instrumentation scope of brighter's tracer and meter.
const ScopeName = "github.com/brightergo/brighter/internal/telemetry"

// Span names and brighter's own attribute keys.
const (
	// SpanHandle is the name of the handler-call span.
	SpanHandle = "handle"
	// OperationProcess is messaging.operation.name of the process span.
	OperationProcess = "process"
	// OperationSend is messaging.operation.name of a rejection publish.
	OperationSend = "send"

	// AttrSubscription is the brighter subscription name.
	AttrSubscription = attribute.Key("brighter.subscription")
	// AttrDeliveryCount is the presented delivery count: on the
	// process span the count at receipt, then the count after the
	// settlement (a Defer adds one).
	AttrDeliveryCount = attribute.Key("brighter.delivery_count")
	// AttrBudget is the subscription's requeueCount (-1 = unlimited).
	AttrBudget = attribute.Key("brighter.budget")
	// AttrOutcome is the handler's outcome: ack, defer, reject,
	// unacceptable.
	AttrOutcome = attribute.Key("brighter.outcome")
	// AttrSettlement is the pump event that settled the delivery:
	// acknowledged, deferred, rejected, settle-failed.
	AttrSettlement = attribute.Key("brighter.settlement")
	// AttrBudgetExhausted is true when a Defer reached the budget.
	AttrBudgetExhausted = attribute.Key("brighter.budget_exhausted")
	// AttrRejectionReason is the rejection reason (DeliveryError,
	// Unacceptable).
	AttrRejectionReason = attribute.Key("brighter.rejection.reason")
	// AttrRejectionRoute is the route: dead-letter, invalid-message, none.
	AttrRejectionRoute = attribute.Key("brighter.rejection.route")
	// AttrRequeueDelay is a Defer's requeue delay in seconds.
	AttrRequeueDelay = attribute.Key("brighter.requeue_delay_s")
	// AttrHandlerType is the subscription's handler type (builtin, exec,
	// http).
	AttrHandlerType = attribute.Key("brighter.handler.type")
)

// Subscription says how one subscription is named in the conventions.
type Subscription struct {
	// Name is the brighter subscription name.
	Name string
	// System is messaging.system: aws_sqs, gcp_pubsub, rocketmq, or
	// memory for the in-memory transport.
	System string
	// Destination is messaging.destination.name: the queue, topic or
	// subscription the consumer reads.
	Destination string
	// ConsumerGroup is messaging.consumer.group.name ("" for none): the
	// RocketMQ consumer group, the Pub/Sub subscription.
	ConsumerGroup string
	// HandlerType is the handler's type (builtin, exec, http).
	HandlerType string
}

// sub is a Subscription with its precomputed attributes.
type sub struct {
	Subscription
	processName string
	common      []attribute.KeyValue // on every span and metric point
	metricSet   metric.MeasurementOption
}

// delivery is one message between dispatch and settlement.
type delivery struct {
	sub   *sub
	ctx   context.Context // carries the process span
	span  trace.Span
	start time.Time
	// mark is when the last step before a rejection ended (the dispatch,
	// the handler, the budget check): the start of the send span.
	mark      time.Time
	exhausted bool
}

// Telemetry is the middleware and observer of one consume run. A nil
// *Telemetry is off: Wrap returns the handler unchanged and Observers
// returns nothing.
type Telemetry struct {
	tracer     trace.Tracer
	prop       propagation.TraceContext
	subs       map[string]*sub
	inflight   sync.Map // *message.Message -> *delivery
	consumed   messagingconv.ClientConsumedMessages
	processDur messagingconv.ProcessDuration
	sent       messagingconv.ClientSentMessages
	opDur      messagingconv.ClientOperationDuration
}

// New builds the Telemetry for subs from a tracer and a meter provider
// (either may be a no-op provider). It returns an error when an instrument
// cannot be made.
func New(tp trace.TracerProvider, mp metric.MeterProvider, subs []Subscription) (*Telemetry, error) {
	t := &Telemetry{tracer: tp.Tracer(ScopeName), subs: map[string]*sub{}}
	m := mp.Meter(ScopeName)
	var errs [4]error
	t.consumed, errs[0] = messagingconv.NewClientConsumedMessages(m)
	t.processDur, errs[1] = messagingconv.NewProcessDuration(m)
	t.sent, errs[2] = messagingconv.NewClientSentMessages(m)
	t.opDur, errs[3] = messagingconv.NewClientOperationDuration(m)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	for _, s := range subs {
		t.subs[s.Name] = newSub(s)
	}
	return t, nil
}

func newSub(s Subscription) *sub {
	common := []attribute.KeyValue{
		semconv.MessagingSystemKey.String(s.System),
		semconv.MessagingDestinationName(s.Destination),
		AttrSubscription.String(s.Name),
	}
	if s.ConsumerGroup != "" {
		common = append(common, semconv.MessagingConsumerGroupName(s.ConsumerGroup))
	}
	return &sub{Subscription: s, processName: OperationProcess + " " + s.Destination, common: common,
		metricSet: metric.WithAttributes(common...)}
}

// subFor returns the subscription of an event, made on the fly for one New
// was not told about.
func (t *Telemetry) subFor(name string) *sub {
	if s, ok := t.subs[name]; ok {
		return s
	}
	return newSub(Subscription{Name: name, System: "unknown", Destination: name})
}

// Observers returns the pump observers to add: none when t is nil.
func (t *Telemetry) Observers() []pump.Observer {
	if t == nil {
		return nil
	}
	return []pump.Observer{t}
}

// Wrap returns h wrapped by the handler middleware, or h itself when t is
// nil.
func (t *Telemetry) Wrap(h pump.Handler) pump.Handler {
	if t == nil {
		return h
	}
	return t.Middleware(h)
}

// producerLink returns the link to the producer's span context carried on
// m, if it carries a valid one.
func (t *Telemetry) producerLink(m *message.Message) (trace.Link, bool) {
	if m.Header.TraceParent == "" {
		return trace.Link{}, false
	}
	carrier := propagation.MapCarrier{"traceparent": m.Header.TraceParent}
	if m.Header.TraceState != "" {
		carrier["tracestate"] = m.Header.TraceState
	}
	sc := trace.SpanContextFromContext(t.prop.Extract(context.Background(), carrier))
	if !sc.IsValid() {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: sc}, true
}

// Observe follows the pump's events: a receipt starts the process span,
// a settlement ends it (with the send span of a rejection), a stop ends
// what its subscription left open.
func (t *Telemetry) Observe(e pump.Event) {
	switch e.Kind {
	case pump.EventReceived:
		t.received(e)
	case pump.EventBudgetExhausted:
		if d, ok := t.load(e.Message); ok {
			d.mark, d.exhausted = e.Time, true
		}
	case pump.EventAcknowledged, pump.EventDeferred, pump.EventRejected, pump.EventSettleFailed:
		if e.Message == nil {
			return
		}
		if v, ok := t.inflight.LoadAndDelete(e.Message); ok {
			t.settled(v.(*delivery), e)
		}
	case pump.EventStopped:
		t.inflight.Range(func(k, v any) bool {
			if d := v.(*delivery); d.sub.Name == e.Subscription {
				t.inflight.Delete(k)
				d.span.SetStatus(codes.Error, "unsettled when the pump stopped")
				d.span.End(trace.WithTimestamp(e.Time))
			}
			return true
		})
	}
}

func (t *Telemetry) load(m *message.Message) (*delivery, bool) {
	if m == nil {
		return nil, false
	}
	v, ok := t.inflight.Load(m)
	if !ok {
		return nil, false
	}
	return v.(*delivery), true
}

func (t *Telemetry) received(e pump.Event) {
	m := e.Message
	if m == nil {
		return
	}
	s := t.subFor(e.Subscription)
	attrs := make([]attribute.KeyValue, 0, len(s.common)+7)
	attrs = append(attrs, s.common...)
	attrs = append(attrs,
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingOperationName(OperationProcess),
		semconv.MessagingMessageID(m.Header.MessageID),
		semconv.MessagingMessageBodySize(len(m.Body)),
		AttrDeliveryCount.Int(e.DeliveryCount),
		AttrBudget.Int(e.Budget),
	)
	if m.Header.CorrelationID != "" {
		attrs = append(attrs, semconv.MessagingMessageConversationID(m.Header.CorrelationID))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithTimestamp(e.Time), trace.WithAttributes(attrs...)}
	if l, ok := t.producerLink(m); ok {
		opts = append(opts, trace.WithLinks(l))
	}
	ctx, span := t.tracer.Start(context.Background(), s.processName, opts...)
	t.inflight.Store(m, &delivery{sub: s, ctx: ctx, span: span, start: e.Time, mark: e.Time})
	t.consumed.Add(ctx, 1, OperationProcess, messagingconv.SystemAttr(s.System), s.common...)
}

func (t *Telemetry) settled(d *delivery, e pump.Event) {
	span := d.span
	span.SetAttributes(AttrOutcome.String(e.Outcome.String()), AttrSettlement.String(e.Kind.String()),
		AttrDeliveryCount.Int(e.DeliveryCount))
	if d.exhausted {
		span.SetAttributes(AttrBudgetExhausted.Bool(true))
	}
	if e.Kind == pump.EventDeferred {
		span.SetAttributes(AttrRequeueDelay.Float64(e.Delay.Seconds()))
	}
	if e.Kind == pump.EventRejected {
		span.SetAttributes(AttrRejectionReason.String(e.Reason.String()), AttrRejectionRoute.String(string(e.Route)))
		if e.Route != broker.RouteNone && e.Destination != "" {
			t.send(d, e)
		}
	}
	errType := ""
	switch {
	case e.Err != nil:
		errType = errorType(e)
		span.RecordError(e.Err)
		span.SetStatus(codes.Error, e.Err.Error())
	case e.Kind == pump.EventSettleFailed:
		errType = "settle_failed"
		span.SetStatus(codes.Error, "settle failed")
	}
	if errType != "" {
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
	}
	span.End(trace.WithTimestamp(e.Time))
	took := e.Time.Sub(d.start).Seconds()
	if errType == "" {
		t.processDur.Record(d.ctx, took, OperationProcess, messagingconv.SystemAttr(d.sub.System), d.sub.common...)
	} else {
		attrs := append(append([]attribute.KeyValue(nil), d.sub.common...), semconv.ErrorTypeKey.String(errType))
		t.processDur.Record(d.ctx, took, OperationProcess, messagingconv.SystemAttr(d.sub.System), attrs...)
	}
}

// errorType names a settlement's failure for error.type.
func errorType(e pump.Event) string {
	switch {
	case errors.Is(e.Err, pump.ErrCutOff):
		return "cut_off"
	case errors.Is(e.Err, pump.ErrHeldBack):
		return "held_back"
	case e.Kind == pump.EventRejected:
		return "routing_failed"
	case e.Kind == pump.EventSettleFailed:
		return "settle_failed"
	}
	return "handler_error"
}

// send records the rejection publish as a producer span under the process
// span, from the end of the step before it to the rejection event.
func (t *Telemetry) send(d *delivery, e pump.Event) {
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemKey.String(d.sub.System),
		semconv.MessagingDestinationName(e.Destination),
		semconv.MessagingOperationTypeSend,
		semconv.MessagingOperationName(OperationSend),
		semconv.MessagingMessageID(e.MessageID()),
		AttrSubscription.String(d.sub.Name),
		AttrRejectionReason.String(e.Reason.String()),
		AttrRejectionRoute.String(string(e.Route)),
		AttrDeliveryCount.Int(e.DeliveryCount),
	}
	_, span := t.tracer.Start(d.ctx, OperationSend+" "+e.Destination, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithTimestamp(d.mark), trace.WithAttributes(attrs...))
	metricAttrs := []attribute.KeyValue{semconv.MessagingDestinationName(e.Destination), AttrSubscription.String(d.sub.Name)}
	if e.Err != nil {
		span.RecordError(e.Err)
		span.SetStatus(codes.Error, e.Err.Error())
		span.SetAttributes(semconv.ErrorTypeKey.String("routing_failed"))
		metricAttrs = append(metricAttrs, semconv.ErrorTypeKey.String("routing_failed"))
	}
	span.End(trace.WithTimestamp(e.Time))
	sys := messagingconv.SystemAttr(d.sub.System)
	t.sent.Add(d.ctx, 1, OperationSend, sys, metricAttrs...)
	t.opDur.Record(d.ctx, e.Time.Sub(d.mark).Seconds(), OperationSend, sys, append(metricAttrs, semconv.MessagingOperationTypeSend)...)
}

// Middleware wraps the handler in the "handle" span, a child of the
// delivery's process span, and hands the handler a copy of the message
// whose TraceParent and TraceState are that span's (the http and exec
// handlers pass them on). The original message is not changed.
func (t *Telemetry) Middleware(next pump.Handler) pump.Handler {
	return func(ctx context.Context, m *message.Message) pump.Result {
		d, ok := t.load(m)
		parent := ctx
		attrs := []attribute.KeyValue{semconv.MessagingMessageID(m.Header.MessageID)}
		if ok {
			parent = trace.ContextWithSpan(ctx, d.span)
			attrs = append(attrs, AttrSubscription.String(d.sub.Name), AttrHandlerType.String(d.sub.HandlerType))
		}
		hctx, span := t.tracer.Start(parent, SpanHandle, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
		cp := *m
		carrier := propagation.MapCarrier{}
		t.prop.Inject(hctx, carrier)
		if tp := carrier["traceparent"]; tp != "" {
			cp.Header.TraceParent, cp.Header.TraceState = tp, carrier["tracestate"]
		}
		res := next(hctx, &cp)
		span.SetAttributes(AttrOutcome.String(res.Outcome.String()))
		if res.Err != nil {
			span.RecordError(res.Err)
			span.SetStatus(codes.Error, res.Err.Error())
			span.SetAttributes(semconv.ErrorTypeKey.String("handler_error"))
		}
		now := time.Now()
		span.End(trace.WithTimestamp(now))
		if ok {
			d.mark = now
		}
		return res
	}
}

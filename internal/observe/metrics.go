package observe

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/pump"
)

// Metric names. Every per-message metric has the label
// "subscription".
const (
	MetricReceived     = "brighter_messages_received_total"
	MetricAcknowledged = "brighter_messages_acknowledged_total"
	// MetricReleased counts messages released unstarted (pump.EventReleased),
	// + reason: "stop" (the only one).
	MetricReleased        = "brighter_messages_released_total"
	MetricDeferred        = "brighter_messages_deferred_total"
	MetricRejected        = "brighter_messages_rejected_total" // + reason, route
	MetricRoutingFailures = "brighter_routing_failures_total"  // + reason, route
	// MetricRoutingRetries counts routings retried without a handler run
	// for a message this process judged exhausted and whose earlier routing
	// failed (pump.Event.Retry); + reason, route.
	MetricRoutingRetries   = "brighter_routing_retries_total"
	MetricRoutingPermanent = "brighter_routing_permanent_failures_total" // + reason, route
	MetricBudgetExhausted  = "brighter_budget_exhausted_total"
	MetricSettleFailures   = "brighter_settle_failures_total" // + outcome
	MetricChannelFailures  = "brighter_channel_failures_total"
	MetricHandlerDuration  = "brighter_handler_duration_seconds" // + outcome
	MetricDeliveryCount    = "brighter_delivery_count"
	MetricInFlight         = "brighter_messages_in_flight"
	MetricDLQDepth         = "brighter_dlq_depth"
	MetricEventsDropped    = "brighter_events_dropped_total" // label sink
	MetricReady            = "brighter_ready"
	// MetricStalled is 1 while a subscription has had no successful broker
	// call for stallAfter (pump.EventStalled), 0 otherwise.
	MetricStalled = "brighter_stalled"
	// Leases (docs/adr/0005-leases.md).
	MetricLeaseExtensions        = "brighter_lease_extensions_total"
	MetricLeaseExtensionFailures = "brighter_lease_extension_failures_total"
	MetricLeasesLapsed           = "brighter_leases_lapsed_total"
	MetricLeasesCapped           = "brighter_leases_capped_total"
	MetricStaleSettles           = "brighter_settles_stale_total" // + outcome
	// MetricBrokerCalls counts broker calls as sent on the wire (a batch is
	// one call, a retry another), by transport, channel, kind and
	// operation (broker.Call); it has no subscription label.
	MetricBrokerCalls = "brighter_broker_calls_total"
)

// ReleasedAtStop is MetricReleased's reason for a message a stop
// released unstarted.
const ReleasedAtStop = "stop"

// Metrics is a pump.Observer that counts events into Prometheus metrics on
// its own registry (one per consume run), and the broker.CallCounter the
// run's transports count their broker calls into (CountCall). Observe
// costs a map lookup and a few atomic adds.
type Metrics struct {
	// reg holds every metric, the Go runtime and process collectors
	// included; own holds Brighter's metrics alone (the same collectors,
	// registered in both), which a scrape filtered to brighter_ families
	// gathers (OwnRegistry).
	reg, own *prometheus.Registry

	received, acked, deferred, exhausted, channelFailures     *prometheus.CounterVec
	rejected, routingFailures, routingRetries, settleFailures *prometheus.CounterVec
	routingPermanent                                          *prometheus.CounterVec
	duration, deliveryCount                                   *prometheus.HistogramVec
	inFlight, dlqDepth, stalled                               *prometheus.GaugeVec
	ready                                                     prometheus.Gauge
	leaseExt, leaseExtFail, leaseLapsed, leaseCapped          *prometheus.CounterVec
	staleSettles, released                                    *prometheus.CounterVec
	brokerCalls                                               *prometheus.CounterVec
	runtime                                                   *runtimeCollectors // on reg

	subs sync.Map // subscription -> *subMetrics
}

// subMetrics are one subscription's label-resolved metrics.
type subMetrics struct {
	received, acked, deferred, exhausted, channelFailures prometheus.Counter
	deliveryCount                                         prometheus.Observer
	inFlight, stalled                                     prometheus.Gauge
}

// NewMetrics makes the metrics on a new registry, with the Go runtime and
// process collectors, and on a second registry without those two
// (OwnRegistry).
func NewMetrics() *Metrics {
	sub := []string{"subscription"}
	m := &Metrics{
		reg:              prometheus.NewRegistry(),
		own:              prometheus.NewRegistry(),
		received:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricReceived, Help: "Deliveries taken up for handling (handed to the handler, or settled on arrival without a run); not a delivery released unstarted at a stop (brighter_messages_released_total) or dropped with its lease lapsed (brighter_leases_lapsed_total)."}, sub),
		released:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricReleased, Help: "Messages received and released unstarted, by reason (stop: a stop released them from the receive-ahead buffer or a received batch); each cost its message a delivery the broker counts, with no handler run."}, []string{"subscription", "reason"}),
		acked:            prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricAcknowledged, Help: "Messages acknowledged after the handler acked."}, sub),
		deferred:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricDeferred, Help: "Messages requeued after the handler deferred."}, sub),
		exhausted:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricBudgetExhausted, Help: "Defers that reached the redelivery budget requeueCount and were rejected."}, sub),
		channelFailures:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricChannelFailures, Help: "Receives that failed with a channel failure."}, sub),
		rejected:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRejected, Help: "Messages rejected and routed (or discarded with no destination), by reason and route: one per message; a routing that failed counts as a routing failure instead."}, []string{"subscription", "reason", "route"}),
		routingRetries:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRoutingRetries, Help: "Routings retried, without a handler run, of messages whose earlier routing here failed."}, []string{"subscription", "reason", "route"}),
		routingFailures:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRoutingFailures, Help: "Rejections whose publish failed; the message was released for redelivery."}, []string{"subscription", "reason", "route"}),
		routingPermanent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRoutingPermanent, Help: "Rejections whose publish can never succeed as it is (too large, invalid destination, a rejection cycle); the message was released with the longest delay."}, []string{"subscription", "reason", "route"}),
		settleFailures:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricSettleFailures, Help: "Acknowledges or requeues that failed; the message stays on the broker."}, []string{"subscription", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricHandlerDuration, Help: "Handler duration in seconds, by outcome.",
			Buckets: prometheus.DefBuckets}, []string{"subscription", "outcome"}),
		deliveryCount: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricDeliveryCount, Help: "Presented delivery count of received messages.",
			Buckets: []float64{0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 100}}, sub),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricInFlight, Help: "Messages received and not yet settled."}, sub),
		dlqDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricDLQDepth, Help: "Messages on the dead-letter queue, where the broker reports it (SQS: approximate)."}, sub),
		stalled:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricStalled, Help: "1 while the subscription has had no successful broker call for stallAfter (its calls keep failing)."}, sub),
		ready:    prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricReady, Help: "1 when every channel is open, none is stalled and the consumer is not draining (follows /readyz)."}),
		leaseExt: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricLeaseExtensions, Help: "Lease extensions of held messages (one per message extended)."}, sub),
		leaseExtFail: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricLeaseExtensionFailures,
			Help: "Lease extensions that failed; the message stays on the broker."}, sub),
		leaseLapsed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricLeasesLapsed,
			Help: "Messages dropped before dispatch because their lease had lapsed (the broker redelivers them)."}, sub),
		leaseCapped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricLeasesCapped,
			Help: "Messages held past maxLeaseExtension, whose lease was left to lapse."}, sub),
		staleSettles: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricStaleSettles,
			Help: "Settles and lease extensions made with a stale receipt: refused by the broker, sent with a receipt whose lease had lapsed by the pump's clock, or known to have used a receipt superseded by a later delivery of the message. Never counted in brighter_messages_acknowledged_total."}, []string{"subscription", "outcome"}),
		brokerCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricBrokerCalls,
			Help: "Broker calls sent (the billed requests), by transport, channel (queue, topic or subscription), kind (receive, ack, visibility, publish, other) and operation: a batch is one call, a retry another."},
			[]string{"transport", "channel", "kind", "operation"}),
	}
	own := []prometheus.Collector{m.received, m.acked, m.deferred, m.exhausted, m.channelFailures, m.rejected, m.routingFailures, m.routingRetries, m.routingPermanent,
		m.settleFailures, m.duration, m.deliveryCount, m.inFlight, m.dlqDepth, m.stalled, m.ready,
		m.leaseExt, m.leaseExtFail, m.leaseLapsed, m.leaseCapped, m.staleSettles, m.released, m.brokerCalls}
	m.own.MustRegister(own...)
	m.reg.MustRegister(own...)
	m.runtime = &runtimeCollectors{}
	m.reg.MustRegister(m.runtime)
	return m
}

// runtimeCollectors is the Go runtime and process collectors, made by the
// first scrape that gathers them: a run whose /metrics is never scraped,
// or only for brighter_ families (OwnRegistry), does not make them (their
// making and registration cost about 0.1 ms of CPU at every consume's
// --listen start-up). It describes nothing (an unchecked collector): the
// registry checks their metrics when it gathers them, and a scrape's
// answer is the same.
type runtimeCollectors struct {
	once sync.Once
	cs   []prometheus.Collector
}

// Describe sends no description.
func (r *runtimeCollectors) Describe(chan<- *prometheus.Desc) {}

// Collect makes the collectors on its first call and collects them.
func (r *runtimeCollectors) Collect(ch chan<- prometheus.Metric) {
	r.once.Do(func() {
		r.cs = []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
	})
	for _, c := range r.cs {
		c.Collect(ch)
	}
}

// Registry returns the registry to serve (promhttp.HandlerFor) or gather:
// every metric, the Go runtime and process collectors included.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// OwnRegistry returns a registry of Brighter's own metrics (every
// brighter_ family), without the Go runtime and process collectors: what a
// scrape that asks only for brighter_ families gathers, so that it does
// not pay for reading the runtime's metrics and /proc (about a
// millisecond of CPU a scrape), only to drop them.
func (m *Metrics) OwnRegistry() *prometheus.Registry { return m.own }

// AddDropSource registers brighter_events_dropped_total{sink=sink}, read
// from dropped at scrape time (a Stream's Dropped). It returns an error if
// sink is already registered.
func (m *Metrics) AddDropSource(sink string, dropped func() uint64) error {
	c := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: MetricEventsDropped, Help: "Events a slow live reader missed (the pump never waits for a reader).",
		ConstLabels: prometheus.Labels{"sink": sink}}, func() float64 { return float64(dropped()) })
	if err := m.reg.Register(c); err != nil {
		return err
	}
	if err := m.own.Register(c); err != nil {
		m.reg.Unregister(c)
		return err
	}
	return nil
}

// CountCall counts one broker call into brighter_broker_calls_total
// (broker.CallCounter); it is safe for concurrent use.
func (m *Metrics) CountCall(c broker.Call) {
	m.brokerCalls.WithLabelValues(c.Transport, c.Channel, string(c.Kind), c.Operation).Inc()
}

// SetReady sets brighter_ready.
func (m *Metrics) SetReady(ready bool) {
	if ready {
		m.ready.Set(1)
	} else {
		m.ready.Set(0)
	}
}

// SetDLQDepth sets brighter_dlq_depth for a subscription.
func (m *Metrics) SetDLQDepth(subscription string, depth int64) {
	m.dlqDepth.WithLabelValues(subscription).Set(float64(depth))
}

// Subscription creates a subscription's series at zero, so a scrape shows
// them before the first message (rate() needs the zero).
func (m *Metrics) Subscription(name string) { m.sub(name) }

func (m *Metrics) sub(name string) *subMetrics {
	if v, ok := m.subs.Load(name); ok {
		return v.(*subMetrics)
	}
	s := &subMetrics{
		received: m.received.WithLabelValues(name), acked: m.acked.WithLabelValues(name),
		deferred: m.deferred.WithLabelValues(name), exhausted: m.exhausted.WithLabelValues(name),
		channelFailures: m.channelFailures.WithLabelValues(name),
		deliveryCount:   m.deliveryCount.WithLabelValues(name), inFlight: m.inFlight.WithLabelValues(name),
		stalled: m.stalled.WithLabelValues(name),
	}
	v, _ := m.subs.LoadOrStore(name, s)
	return v.(*subMetrics)
}

// Observe implements pump.Observer.
func (m *Metrics) Observe(e pump.Event) {
	s := m.sub(e.Subscription)
	switch e.Kind {
	case pump.EventReceived:
		s.received.Inc()
		s.deliveryCount.Observe(float64(e.DeliveryCount))
		s.inFlight.Inc()
	case pump.EventAcknowledged:
		s.acked.Inc()
		s.inFlight.Dec()
		if !e.Retry { // a retried acknowledgement ran no handler
			m.duration.WithLabelValues(e.Subscription, e.Outcome.String()).Observe(e.Duration.Seconds())
		}
	case pump.EventDeferred:
		s.deferred.Inc()
		s.inFlight.Dec()
		m.duration.WithLabelValues(e.Subscription, e.Outcome.String()).Observe(e.Duration.Seconds())
	case pump.EventBudgetExhausted:
		s.exhausted.Inc()
	case pump.EventRejected:
		s.inFlight.Dec()
		if e.Duration > 0 { // a handler ran: its run ends in this rejection
			m.duration.WithLabelValues(e.Subscription, e.Outcome.String()).Observe(e.Duration.Seconds())
		}
		if e.Retry {
			m.routingRetries.WithLabelValues(e.Subscription, e.Reason.String(), string(e.Route)).Inc()
		}
		if e.Err == nil {
			m.rejected.WithLabelValues(e.Subscription, e.Reason.String(), string(e.Route)).Inc()
		} else {
			m.routingFailures.WithLabelValues(e.Subscription, e.Reason.String(), string(e.Route)).Inc()
			if e.Permanent {
				m.routingPermanent.WithLabelValues(e.Subscription, e.Reason.String(), string(e.Route)).Inc()
			}
		}
	case pump.EventSettleFailed:
		// The message's flight ends here (it stays on the broker). A failed
		// release during a stop is reported the same way for a message that
		// was never dispatched, so the gauge may dip by one at shutdown.
		s.inFlight.Dec()
		m.settleFailures.WithLabelValues(e.Subscription, e.Outcome.String()).Inc()
		if errors.Is(e.Err, broker.ErrStaleReceipt) {
			m.staleSettles.WithLabelValues(e.Subscription, e.Outcome.String()).Inc()
		}
	case pump.EventStaleSettle:
		// A settle that used a stale receipt and was answered with success:
		// never an acknowledgement. An acknowledgement sent
		// with a lapsed receipt ends its flight here (EndsFlight); a
		// superseded settle's earlier delivery ended its own.
		m.staleSettles.WithLabelValues(e.Subscription, e.Outcome.String()).Inc()
		if e.EndsFlight {
			s.inFlight.Dec()
			if !e.Retry {
				m.duration.WithLabelValues(e.Subscription, e.Outcome.String()).Observe(e.Duration.Seconds())
			}
		}
		if e.Err != nil && e.Err != pump.ErrSupersededReceipt && e.Err != pump.ErrLapsedReceipt {
			m.settleFailures.WithLabelValues(e.Subscription, pump.Ack.String()).Inc()
		}
	case pump.EventLeaseExtended:
		m.leaseExt.WithLabelValues(e.Subscription).Inc()
	case pump.EventLeaseExtendFailed:
		m.leaseExtFail.WithLabelValues(e.Subscription).Inc()
		if errors.Is(e.Err, broker.ErrStaleReceipt) {
			m.staleSettles.WithLabelValues(e.Subscription, "extend").Inc()
		}
	case pump.EventReleased:
		m.released.WithLabelValues(e.Subscription, ReleasedAtStop).Inc()
	case pump.EventLeaseLapsed:
		m.leaseLapsed.WithLabelValues(e.Subscription).Inc()
	case pump.EventLeaseCapped:
		m.leaseCapped.WithLabelValues(e.Subscription).Inc()
	case pump.EventChannelFailure:
		s.channelFailures.Inc()
	case pump.EventStalled:
		s.stalled.Set(1)
	case pump.EventChannelRecovered:
		s.stalled.Set(0)
	case pump.EventStarted:
		// Series at zero from the start.
	}
}

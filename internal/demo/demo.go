// Package demo is the engine of `brighter demo`: the poison-message story
// told on an in-process Pub/Sub emulator (pstest), with no cloud, no Docker
// and no configuration, or on a running Google Pub/Sub emulator
// (Options.Emulator).
//
// It starts the emulator, makes a topic and a subscription with
// requeueCount 3 and a native DeadLetterPolicy of 5 through the gcp
// transport's own Channels, publishes a few orders with the gcp Producer,
// runs the ordinary message pump over the gcp consumer with a handler that
// acknowledges the good orders, defers the poison one for ever and marks the
// malformed one unacceptable, and narrates every step in plain language.
// Then it reads the routed copies back through the ordinary consumer and
// shows their rejection metadata.
//
// It is an application of internal/broker/gcp and internal/pump, not part of
// the transport: it joins the two as cmd/brighter does.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: github.com/spf13/cobra, cmd/...
//
// Imported by: internal/cmd/demo
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// The demo's fixed names.
const (
	// Project is the emulator project id of the embedded emulator, and the
	// default one on a running emulator.
	Project = "brighter-demo"
	// Topic is the topic the orders are published to.
	Topic = "orders"
	// Subscription is the subscription the pump reads.
	Subscription = "orders"
	// DeadLetterTopic is deadLetterRoutingKey.
	DeadLetterTopic = "orders-dlq"
	// InvalidTopic is invalidMessageRoutingKey.
	InvalidTopic = "orders-invalid"
	// NativeTopic is the native DeadLetterPolicy's topic.
	NativeTopic = "orders-native-dlq"
	// RequeueCount is the demo's redelivery budget.
	RequeueCount = 3
	// MaxDeliveryAttempts is the native DeadLetterPolicy's limit (Pub/Sub's
	// minimum is 5).
	MaxDeliveryAttempts = 5
)

// The demo's messages: two good orders, a poison one and a malformed one.
const (
	GoodID1   = "order-1001"
	GoodID2   = "order-1002"
	PoisonID  = "order-1003-poison"
	InvalidID = "order-1004-malformed"
)

// Options configures a demo run.
type Options struct {
	// Out receives the narration (stdout).
	Out io.Writer
	// Logger receives the transport's and the pump's log records (stderr);
	// nil discards them.
	Logger *slog.Logger
	// Color styles the narration with ANSI colours.
	Color bool
	// Listen is the embedded emulator's listen address; "" means 127.0.0.1
	// on a free port. It is ignored with Emulator.
	Listen string
	// Emulator is the host:port of a running Google Pub/Sub emulator to tell
	// the story on instead of the embedded one; "" starts the embedded
	// emulator (pstest).
	Emulator string
	// Project is the project id on the emulator; "" means Project
	// ("brighter-demo"). A run on a running emulator that an earlier run
	// used should take a project of its own, so that no leftover message
	// joins the story.
	Project string
	// Mode is "stream" (the default, streaming pull) or "pull".
	Mode string
	// Variant is the pump variant; "" means reactor (one message at a time,
	// so the narration reads in order).
	Variant pump.Variant
	// Timeout bounds the story; 0 means 60 s. The story normally ends in a
	// few seconds.
	Timeout time.Duration
}

// Summary is what happened in a run, for callers and tests.
type Summary struct {
	// Acknowledged lists the ids the handler acknowledged.
	Acknowledged []string
	// PoisonDeliveries are the delivery counts the poison order presented,
	// one per handler invocation.
	PoisonDeliveries []int
	// DeadLettered and Invalid are the routed copies read back through the
	// ordinary consumer from the dead-letter and invalid-message topics.
	DeadLettered, Invalid *message.Message
	// NativeEmpty reports that the native DeadLetterPolicy's subscription
	// held nothing: Brighter's budget fired before the native limit.
	NativeEmpty bool
}

// Demo is a running emulator with the demo's channels.
type Demo struct {
	opts   Options
	srv    *pstest.Server // nil on a running emulator (Options.Emulator)
	addr   string
	conn   *grpc.ClientConn
	client *pubsub.Client
	n      *narrator
}

// probeTimeout bounds the probe of a running emulator (Options.Emulator).
const probeTimeout = 5 * time.Second

// Start starts the emulator and creates the demo's channels with the gcp
// transport's makeChannels create. It returns an error naming the step that
// failed. Close the Demo when done.
func Start(ctx context.Context, o Options) (*Demo, error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Mode == "" {
		o.Mode = "stream"
	}
	if o.Mode != "stream" && o.Mode != "pull" {
		return nil, fmt.Errorf("mode %q: valid values are stream, pull", o.Mode)
	}
	if o.Variant == "" {
		o.Variant = pump.Reactor
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.Project == "" {
		o.Project = Project
	}
	d := &Demo{opts: o, n: &narrator{w: o.Out, color: o.Color}}
	where := "an in-process emulator, no cloud, no Docker"
	if o.Emulator != "" {
		d.addr = o.Emulator
		where = "the emulator at " + o.Emulator
	} else {
		listen := o.Listen
		if listen == "" {
			listen = "127.0.0.1:0"
		}
		// Check the address first: pstest panics when it cannot listen.
		l, err := net.Listen("tcp", listen)
		if err != nil {
			return nil, fmt.Errorf("start the Pub/Sub emulator on %s: %w", listen, err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		if _, port, err := net.SplitHostPort(listen); err == nil && port == "0" {
			// Any port: pstest binds port 0 itself, so no other process
			// can take the port the check got before pstest binds it.
			addr = listen
		}
		d.srv = pstest.NewServerWithAddress(addr)
		d.addr = d.srv.Addr
	}
	var err error
	d.conn, err = grpc.NewClient(d.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("dial the Pub/Sub emulator at %s: %w", d.addr, err)
	}
	d.client, err = gcp.Connect(ctx, o.Project, option.WithGRPCConn(d.conn), option.WithTelemetryDisabled())
	if err != nil {
		d.Close()
		return nil, err
	}
	if d.srv == nil {
		// A running emulator named by --emulator: one probe, so that an
		// unreachable host is one error naming it and the flag, not a
		// distant "context deadline exceeded".
		if err := gcp.Probe(ctx, d.client, o.Project, probeTimeout); err != nil {
			d.Close()
			return nil, fmt.Errorf("Pub/Sub at %s (the --emulator flag): %w", d.addr, err)
		}
	}
	d.n.title("brighter demo: a poison message on Google Cloud Pub/Sub (" + where + ")")
	if d.srv != nil {
		d.n.line("Started the Pub/Sub emulator at %s, project %s.", d.addr, o.Project)
	} else {
		d.n.line("Using the Pub/Sub emulator at %s, project %s.", d.addr, o.Project)
	}
	err = gcp.NewChannels(d.client, gcp.ChannelOptions{
		Topic: Topic, Subscription: Subscription, RequeueCount: RequeueCount,
		DeadLetterPolicy: &gcp.DeadLetterPolicy{
			Topic: NativeTopic, MaxDeliveryAttempts: MaxDeliveryAttempts,
			// Named members: no Resource Manager call from a demo.
			PublisherMember:  "serviceAccount:demo@brighter-demo.iam.gserviceaccount.com",
			SubscriberMember: "serviceAccount:demo@brighter-demo.iam.gserviceaccount.com",
		},
		DeadLetterTopic: DeadLetterTopic, InvalidTopic: InvalidTopic, Logger: o.Logger, OnEmulator: true,
	}).EnsureChannels(ctx)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("create the demo's channels: %w", err)
	}
	d.n.line("Created topic %q and subscription %q with requeueCount %d and a native DeadLetterPolicy of %d attempts (to %q),",
		Topic, Subscription, RequeueCount, MaxDeliveryAttempts, NativeTopic)
	d.n.line("and the rejection topics %q (deadLetterRoutingKey) and %q (invalidMessageRoutingKey), each with a subscription.", DeadLetterTopic, InvalidTopic)
	d.n.note("(The emulator has no IAM service, so the two IAM bindings for native dead-lettering are skipped with a Warning on stderr;")
	d.n.note(" the emulator forwards to the policy's topic without them.)")
	return d, nil
}

// EmulatorHost is the emulator's host:port, the value of
// PUBSUB_EMULATOR_HOST for other brighter commands.
func (d *Demo) EmulatorHost() string { return d.addr }

// SubscriptionsFile returns a subscriptions file (YAML) for `brighter
// consume`, `send` and `dlq` against this emulator: the demo's subscription
// with a defer handler, so a message sent to it runs down its budget.
func (d *Demo) SubscriptionsFile() []byte {
	return fmt.Appendf(nil, `# Written by brighter demo --keep-running: the demo's subscription on the
# Pub/Sub emulator at %[1]s.
# The emulator has no IAM service: brighter consume logs two Warnings ("IAM
# binding for native dead-lettering abandoned") for the members below. They
# are expected here; the emulator forwards to the policy's topic without them.
connections:
  gcp:
    projectId: %[2]s
    emulatorHost: %[1]s
subscriptions:
  - name: orders
    transport: gcp
    channelName: %[3]s
    routingKey: %[4]s
    messagePumpType: reactor
    requeueCount: %[5]d
    deadLetterRoutingKey: %[6]s
    invalidMessageRoutingKey: %[7]s
    handler: {type: builtin, name: defer}
    gcp:
      mode: %[8]s
      deadLetterPolicy:
        topic: %[9]s
        maxDeliveryAttempts: %[10]d
        publisherMember: serviceAccount:demo@brighter-demo.iam.gserviceaccount.com
      subscriberMember: serviceAccount:demo@brighter-demo.iam.gserviceaccount.com
`, d.addr, d.opts.Project, Subscription, Topic, RequeueCount, DeadLetterTopic, InvalidTopic, d.opts.Mode, NativeTopic, MaxDeliveryAttempts)
}

// Close closes the client and stops the embedded emulator (a running
// emulator, Options.Emulator, is left running).
func (d *Demo) Close() {
	if d.client != nil {
		_ = d.client.Close()
	}
	if d.conn != nil {
		_ = d.conn.Close()
	}
	if d.srv != nil {
		_ = d.srv.Close()
	}
}

// handler is the demo's message handler: good orders are acknowledged, the
// poison order is deferred every time, the malformed one is unacceptable.
func handler(ctx context.Context, m *message.Message) pump.Result {
	switch m.Header.MessageID {
	case PoisonID:
		return pump.Result{Outcome: pump.Defer, Reason: "the order refers to a warehouse that does not exist; retrying will not help"}
	case InvalidID:
		return pump.Result{Outcome: pump.Unacceptable, Reason: "the body is not an order: missing orderId"}
	}
	return pump.Result{Outcome: pump.Ack}
}

// story tracks the run's progress from the pump's events.
type story struct {
	mu       sync.Mutex
	acked    []string
	poison   []int
	rejected map[string]pump.Event
	done     chan struct{}
	closed   bool
}

func (s *story) settled() bool {
	return len(s.acked) == 2 && len(s.rejected) == 2
}

// Run tells the story: publish, pump, read back. It returns when every
// message has been settled and the routed copies have been read (normally
// in a few seconds), or with an error when ctx ends or Options.Timeout
// passes first.
func (d *Demo) Run(ctx context.Context) (*Summary, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	n := d.n

	prod := gcp.NewProducer(d.client, gcp.ProducerOptions{})
	defer prod.Close(context.WithoutCancel(ctx))
	n.section("1. Publishing four orders in Brighter's wire format")
	msgs := []struct {
		id, body, what string
	}{
		{GoodID1, `{"orderId":1001,"sku":"tea"}`, "a good order"},
		{GoodID2, `{"orderId":1002,"sku":"coffee"}`, "a good order"},
		{PoisonID, `{"orderId":1003,"warehouse":"atlantis"}`, "a poison order: the handler can never process it"},
		{InvalidID, `{"sku":"???"}`, "a malformed order: the handler cannot even read it"},
	}
	for _, m := range msgs {
		msg := message.New(m.id, Topic, message.MTCommand, []byte(m.body))
		if err := prod.Send(ctx, msg); err != nil {
			return nil, fmt.Errorf("publish %s: %w", m.id, err)
		}
		n.line("  published %-22s %s", m.id, m.what)
	}

	n.section(fmt.Sprintf("2. The message pump reads %q (%s, %s pump); the handler acks good orders, defers the poison one, rejects the malformed one", Subscription, d.modeText(), d.opts.Variant))
	st := &story{rejected: map[string]pump.Event{}, done: make(chan struct{})}
	var consumer broker.Consumer
	copts := gcp.ConsumerOptions{Subscription: Subscription, Topic: Topic, BufferSize: 1, DeadLetterTopic: DeadLetterTopic, InvalidTopic: InvalidTopic, Logger: d.opts.Logger}
	if d.opts.Mode == "pull" {
		consumer = gcp.NewPullConsumer(d.client, prod, copts)
	} else {
		consumer = gcp.NewStreamConsumer(d.client, prod, copts)
	}
	defer consumer.Close(context.WithoutCancel(ctx))
	p, err := pump.New(consumer, handler, pump.Options{
		Subscription: Subscription, Variant: d.opts.Variant, NoOfPerformers: 1, BufferSize: 1,
		TimeOut: 500 * time.Millisecond, RequeueCount: RequeueCount, EmptyChannelDelay: 20 * time.Millisecond,
		ChannelFailureDelay: 200 * time.Millisecond, DrainTimeout: 5 * time.Second,
	}, pump.LogObserver{Logger: d.opts.Logger}, pump.ObserverFunc(func(e pump.Event) { d.observe(st, e) }))
	if err != nil {
		return nil, fmt.Errorf("make the pump: %w", err)
	}
	pctx, stop := context.WithCancel(ctx)
	perr := make(chan error, 1)
	go func() { perr <- p.Run(pctx) }()
	select {
	case <-st.done:
	case err := <-perr:
		stop()
		return nil, fmt.Errorf("the pump stopped early: %w", err)
	case <-ctx.Done():
		stop()
		<-perr
		return nil, fmt.Errorf("the story did not finish: %w", ctx.Err())
	}
	stop()
	if err := <-perr; err != nil {
		return nil, fmt.Errorf("the pump stopped with an error: %w", err)
	}

	sum := &Summary{}
	st.mu.Lock()
	sum.Acknowledged = append(sum.Acknowledged, st.acked...)
	sum.PoisonDeliveries = append(sum.PoisonDeliveries, st.poison...)
	st.mu.Unlock()

	n.section("3. Reading the routed messages back through the ordinary consumer")
	if sum.DeadLettered, err = d.readBack(ctx, prod, DeadLetterTopic, PoisonID); err != nil {
		return nil, err
	}
	if sum.Invalid, err = d.readBack(ctx, prod, InvalidTopic, InvalidID); err != nil {
		return nil, err
	}
	if sum.NativeEmpty, err = d.nativeEmpty(ctx, prod); err != nil {
		return nil, err
	}
	if sum.NativeEmpty {
		n.line("The native DeadLetterPolicy (%d attempts) never fired: Brighter's budget of %d ran out first, so %q is empty", MaxDeliveryAttempts, RequeueCount, NativeTopic)
		n.line("and the dead-lettered copy says why it was rejected.")
	} else {
		n.warn("Something reached the native dead-letter topic %q: the native limit fired too.", NativeTopic)
	}
	n.section("Done")
	n.line("Two orders acknowledged, the poison order dead-lettered after %d deliveries, the malformed order set aside as invalid.", len(sum.PoisonDeliveries))
	return sum, nil
}

func (d *Demo) modeText() string {
	if d.opts.Mode == "pull" {
		return "unary pull"
	}
	return "streaming pull"
}

// observe narrates one pump event and advances the story.
func (d *Demo) observe(st *story, e pump.Event) {
	n := d.n
	id := e.MessageID()
	st.mu.Lock()
	defer st.mu.Unlock()
	switch e.Kind {
	case pump.EventReceived:
		attempt := "none"
		if e.Message != nil && e.Message.DeliveryAttempt > 0 {
			attempt = fmt.Sprint(e.Message.DeliveryAttempt)
		}
		if id == PoisonID {
			st.poison = append(st.poison, e.DeliveryCount)
			n.line("  delivery %d of %s: delivery count %d (Pub/Sub delivery_attempt %s)", len(st.poison), id, e.DeliveryCount, attempt)
			return
		}
		n.line("  delivery of %s: delivery count %d (Pub/Sub delivery_attempt %s)", id, e.DeliveryCount, attempt)
	case pump.EventAcknowledged:
		st.acked = append(st.acked, id)
		n.ok("    handled: %s acknowledged", id)
	case pump.EventDeferred:
		n.warn("    deferred: %s's count is now %d of requeueCount %d, so it is requeued", id, e.DeliveryCount, RequeueCount)
	case pump.EventBudgetExhausted:
		n.bad("    deferred again: the count reaches %d = requeueCount %d, the budget fires on delivery %d: reject with DeliveryError", e.DeliveryCount, RequeueCount, len(st.poison))
	case pump.EventRejected:
		st.rejected[id] = e
		switch {
		case e.Err != nil:
			n.bad("    routing %s failed (%v): released for redelivery", id, e.Err)
			delete(st.rejected, id)
		case e.Route == broker.RouteDeadLetter || e.Route == broker.RouteInvalidMessage:
			n.bad("    rejected: %s (%s) published to %q with the rejection metadata, then acknowledged", id, e.Reason, e.Destination)
		default:
			n.bad("    rejected: %s (%s), route %s", id, e.Reason, e.Route)
		}
	}
	if !st.closed && st.settled() {
		st.closed = true
		close(st.done)
	}
}

// readBack reads the routed copy of id from topic's subscription with the
// ordinary pull consumer (so it presents its stamped count, R-28), narrates
// its metadata and acknowledges it.
func (d *Demo) readBack(ctx context.Context, pub broker.Publisher, topic, id string) (*message.Message, error) {
	c := gcp.NewPullConsumer(d.client, pub, gcp.ConsumerOptions{Subscription: topic, BufferSize: 10, Logger: d.opts.Logger})
	for {
		ms, err := c.Receive(ctx, time.Second)
		if err != nil {
			return nil, fmt.Errorf("read back from %s: %w", topic, err)
		}
		for _, m := range ms {
			if m.Header.MessageID != id {
				continue
			}
			n := d.n
			n.line("From %q (subscription %q):", topic, topic)
			n.line("  message %s, delivery count %d (the count the rejecting consumer stamped; it does not grow on this topic)", m.Header.MessageID, m.Header.HandledCount)
			for _, k := range message.RejectionKeys {
				v, _ := m.Header.Bag.String(k)
				n.line("  %-20s %s", k+":", v)
			}
			if err := c.Acknowledge(ctx, m); err != nil {
				return nil, fmt.Errorf("acknowledge the read-back copy on %s: %w", topic, err)
			}
			return m, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read back %s from %s: %w", id, topic, err)
		}
	}
}

// nativeEmpty reports whether the native DeadLetterPolicy's subscription
// holds nothing (one short pull).
func (d *Demo) nativeEmpty(ctx context.Context, pub broker.Publisher) (bool, error) {
	c := gcp.NewPullConsumer(d.client, pub, gcp.ConsumerOptions{Subscription: "dlq-" + Subscription, BufferSize: 10, Logger: d.opts.Logger})
	ms, err := c.Receive(ctx, 300*time.Millisecond)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return false, fmt.Errorf("read the native dead-letter subscription: %w", err)
	}
	for _, m := range ms {
		_ = c.Requeue(ctx, m, 0)
	}
	return len(ms) == 0, nil
}

// narrator writes the story, styled with ANSI colours when asked; it is
// safe for concurrent use.
type narrator struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
}

const (
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[31m"
	ansiCyan   = "\x1b[36m"
	ansiReset  = "\x1b[0m"
)

func (n *narrator) styled(style, format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.color && style != "" {
		s = style + s + ansiReset
	}
	_, _ = io.WriteString(n.w, s+"\n")
}

func (n *narrator) line(format string, args ...any) { n.styled("", format, args...) }
func (n *narrator) ok(format string, args ...any)   { n.styled(ansiGreen, format, args...) }
func (n *narrator) warn(format string, args ...any) { n.styled(ansiYellow, format, args...) }
func (n *narrator) bad(format string, args ...any)  { n.styled(ansiRed, format, args...) }
func (n *narrator) note(format string, args ...any) { n.styled(ansiDim, format, args...) }
func (n *narrator) title(s string)                  { n.styled(ansiBold+ansiCyan, "%s", s) }
func (n *narrator) section(s string) {
	n.line("")
	n.styled(ansiBold, "%s", s)
}

// Line writes one narration line (used by the command for its closing
// instructions, so they share the story's writer and lock).
func (d *Demo) Line(format string, args ...any) { d.n.line(format, args...) }

// Heading writes a section heading of the narration.
func (d *Demo) Heading(s string) { d.n.section(strings.TrimSpace(s)) }

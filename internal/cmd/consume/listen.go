package consume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/mattn/go-isatty"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/brightergo/brighter/internal/tui"
)

// Stable log texts of the observability wiring.
const (
	logListenerStopFailed = "observability listener did not stop cleanly"
	logTUIFailed          = "dashboard failed"
)

// consumeObservers is consume's --listen and --tui wiring: the
// metrics, health and event stream observers, the HTTP listener, the DLQ
// depth pollers and the in-process dashboard. Its zero parts are off.
type consumeObservers struct {
	metrics *observe.Metrics
	health  *observe.Health
	stream  *observe.Stream
	stop    func(context.Context) error
	depths  map[string]observe.DeadLetterDepther
	logger  *slog.Logger
}

// nativeLimit returns the subscription's broker-side redrive limit M, or 0.
func nativeLimit(s *config.Subscription) int {
	switch {
	case s.SQS != nil && s.SQS.RedrivePolicy != nil:
		return s.SQS.RedrivePolicy.MaxReceiveCount
	case s.GCP != nil && s.GCP.DeadLetterPolicy != nil:
		return s.GCP.DeadLetterPolicy.MaxDeliveryAttempts
	case s.RocketMQ != nil:
		return s.RocketMQ.MaxDeliveryAttempts
	}
	return 0
}

// startObservers builds what --listen and --tui ask for and starts the
// listener; stream is the event stream newLogs made (nil when neither is
// given: nothing is built).
func (o *Options) startObservers(ctx context.Context, logger *slog.Logger, stream *observe.Stream, subs []*config.Subscription) (*consumeObservers, error) {
	ob := &consumeObservers{depths: map[string]observe.DeadLetterDepther{}, logger: logger}
	if stream == nil {
		return ob, nil
	}
	ob.stream = stream
	for _, s := range subs {
		m := nativeLimit(s)
		ob.stream.Describe(s.Name, observe.SubscriptionInfo{Transport: string(s.Transport), Budget: s.RequeueCount, NativeLimit: m,
			EffectiveLimit: observe.EffectiveLimit(s.RequeueCount, m), DeadLetter: s.DeadLetterRoutingKey})
	}
	if o.listen == "" {
		return ob, nil
	}
	if _, err := observe.ListenAddr(o.listen); err != nil {
		return nil, cmdutil.UsageErr(fmt.Errorf("--listen %w", err))
	}
	ob.metrics = observe.NewMetrics()
	ob.health = observe.NewHealth()
	ob.health.OnChange(ob.metrics.SetReady)
	for _, s := range subs {
		ob.metrics.Subscription(s.Name)
	}
	if err := ob.metrics.AddDropSource("events", ob.stream.Dropped); err != nil {
		return nil, cmdutil.FailureErr(fmt.Errorf("--listen: %w", err))
	}
	srv := &observe.Server{Metrics: ob.metrics, Health: ob.health, Stream: ob.stream, Logger: logger}
	_, stop, err := srv.Start(ctx, o.listen)
	if err != nil {
		return nil, cmdutil.FailureErr(fmt.Errorf("--listen: %w", err))
	}
	ob.stop = stop
	return ob, nil
}

// connecting publishes on the event stream (when there is one) that the
// channel of subscription sub is being opened, from since, those of opened
// being open already: /events says so, and brighter watch draws each row's
// state (observe.KindConnecting).
func (ob *consumeObservers) connecting(sub string, opened []string, since time.Time) {
	if ob.stream != nil {
		ob.stream.Connecting(sub, opened, since)
	}
}

// connected publishes on the event stream (when there is one) that every
// channel is open (observe.KindConnected).
func (ob *consumeObservers) connected() {
	if ob.stream != nil {
		ob.stream.Connected()
	}
}

// observers returns the pump observers: the log observer plus ours.
func (ob *consumeObservers) observers(log pump.Observer) []pump.Observer {
	out := []pump.Observer{log}
	if ob.metrics != nil {
		out = append(out, ob.metrics)
	}
	if ob.health != nil {
		out = append(out, ob.health)
	}
	if ob.stream != nil {
		out = append(out, ob.stream)
	}
	return out
}

// addDepth records where a subscription's DLQ depth comes from: the
// consumer when it implements observe.DeadLetterDepther, the memory broker
// for memory subscriptions, otherwise nowhere.
func (ob *consumeObservers) addDepth(ts transport.Registry, s *config.Subscription, c broker.Consumer) {
	if ob.stream == nil || s.DeadLetterRoutingKey == "" {
		return
	}
	if d, ok := c.(observe.DeadLetterDepther); ok {
		ob.depths[s.Name] = d
		return
	}
	if mt, ok := ts[config.TransportMemory].(*transport.Memory); ok && s.Transport == config.TransportMemory {
		dlq := s.DeadLetterRoutingKey
		ob.depths[s.Name] = observe.DepthFunc(func(context.Context) (int64, error) { return int64(mt.Broker().Depth(dlq)), nil })
	}
}

// running marks the consumer ready (every channel is open), starts the
// depth pollers, and marks it not ready as soon as runCtx ends (draining).
func (ob *consumeObservers) running(runCtx context.Context) {
	if ob.health != nil {
		ob.health.SetReady()
		go func() {
			<-runCtx.Done()
			ob.health.SetNotReady("draining")
		}()
	}
	for name, d := range ob.depths {
		go observe.PollDepth(runCtx, name, d, observe.DefaultDepthInterval, ob.metrics, ob.stream, ob.logger)
	}
}

// close stops the listener, once the pumps have returned: every /events
// stream ends cleanly, and connections still busy after
// observe.DefaultShutdownTimeout are closed (logged at Warning), so no
// reader can hold the process after a stop.
func (ob *consumeObservers) close(ctx context.Context) {
	if ob.stop == nil {
		return
	}
	if err := ob.stop(ctx); err != nil {
		ob.logger.Warn(logListenerStopFailed, "error", err)
	}
}

// consumeLogs is consume's logger and where its Warn/Error lines also go.
type consumeLogs struct {
	logger *slog.Logger
	// stream is the event stream of --listen and --tui (nil without
	// either): Warn and Error lines are published on it as KindLog records
	// (observe.LogTee), for the dashboard's log panel and /events.
	stream *observe.Stream
	// quiet, while set, keeps lines off stderr: the dashboard of --tui
	// draws on the terminal stderr is (they still reach the stream).
	quiet *atomic.Bool
	// stderrTTY says whether stderr is a terminal.
	stderrTTY bool
}

// newLogs builds consume's logger: the flags' handler, behind LogTee when
// there is an event stream, behind the rate limit of repeated Errors.
func (o *Options) newLogs() (*consumeLogs, error) {
	h, level, err := o.global.LogHandler()
	if err != nil {
		return nil, err
	}
	type fder interface{ Fd() uintptr }
	l := &consumeLogs{quiet: new(atomic.Bool)}
	if f, ok := o.io.ErrOut.(fder); ok && isatty.IsTerminal(f.Fd()) {
		l.stderrTTY = true
	}
	h = quietHandler{inner: h, quiet: l.quiet}
	if o.listen != "" || o.tui {
		l.stream = observe.NewStream(0, observe.DefaultBacklog)
		l.stream.SetRedactor(o.io.Redactor)
		h = observe.LogTee(h, max(level, slog.LevelWarn), l.stream)
	}
	l.logger = slog.New(redact.Handler(observe.RateLimit(h, observe.DefaultLogEvery, observe.DefaultLogBurst), o.io.Redactor))
	return l, nil
}

// quietHandler drops every record while quiet is set (the dashboard owns
// the terminal); otherwise it is inner.
type quietHandler struct {
	inner slog.Handler
	quiet *atomic.Bool
}

func (h quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.quiet.Load() {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{inner: h.inner.WithAttrs(as), quiet: h.quiet}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{inner: h.inner.WithGroup(name), quiet: h.quiet}
}

// dashboard is the running in-process dashboard of consume --tui; its
// zero value (no --tui) does nothing.
type dashboard struct {
	p      *tea.Program
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	logs   *consumeLogs
	once   sync.Once
}

// awaitingReceive shows on the dashboard (when there is one) that the
// drain of subscription sub waits only for its receive in flight, for up
// to upTo.
func (d *dashboard) awaitingReceive(sub string, upTo time.Duration) {
	if d.p != nil {
		d.p.Send(tui.AwaitingReceiveMsg{Subscription: sub, UpTo: upTo})
	}
}

// close, called once the pumps have returned, ends the dashboard and waits
// for it to give the terminal back; the logs go to stderr again. Calls
// after the first do nothing.
func (d *dashboard) close() {
	if d.p == nil {
		return
	}
	d.once.Do(func() {
		d.p.Quit()
		<-d.done
		d.cancel()
		d.logs.quiet.Store(false)
	})
}

// kill ends the dashboard at once, giving the terminal back (a forced
// exit follows).
func (d *dashboard) kill() {
	if d.p == nil {
		return
	}
	d.p.Kill()
	<-d.done
	d.logs.quiet.Store(false)
}

// startTUI runs the dashboard in-process, fed from the event stream (pump
// events and Warn/Error log lines), from before the first channel opens
// (connecting says which, and for how long) until close or kill: q calls
// interrupt, as a signal would (while connecting it gives the connection
// up; then the first drains, a second exits at once), and the dashboard
// stays up, showing "draining (N in flight)...", whatever started the
// drain, until the pumps have returned (run ties it to the run). While it
// draws, logs are kept off a terminal stderr; redirect stderr to a file to
// keep every line.
func (o *Options) startTUI(ctx context.Context, interrupt func(), ob *consumeObservers, logs *consumeLogs) *dashboard {
	if !o.tui {
		return &dashboard{}
	}
	// The dashboard outlives the run's context: it shows the drain.
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	model := tui.New(tui.Options{Title: "brighter consume", NoColor: !o.io.Color, Interrupt: interrupt})
	// Signals are consume's to handle (the dashboard's own handler would
	// quit it on SIGTERM and blank the screen for the drain); the size is
	// the terminal's, 80x24 until it says (or when it cannot).
	p := tea.NewProgram(model, tea.WithContext(dctx), tea.WithInput(o.io.In), tea.WithOutput(o.io.Out), tea.WithFPS(10),
		tea.WithoutSignalHandler(), tea.WithWindowSize(tui.DefaultWidth, tui.DefaultHeight))
	d := &dashboard{p: p, ctx: dctx, cancel: cancel, done: make(chan struct{}), logs: logs}
	if logs.stderrTTY {
		logs.quiet.Store(true)
	}
	b := tui.NewBatcher(0, 0)
	go b.Run(dctx, p.Send)
	go tui.FeedStream(dctx, ob.stream.Subscribe(), b)
	go func() {
		defer close(d.done)
		_, err := p.Run()
		if err != nil && !errors.Is(err, tea.ErrProgramKilled) && dctx.Err() == nil {
			logs.quiet.Store(false)
			ob.logger.Error(logTUIFailed, "error", err)
		}
	}()
	return d
}

// connecting shows on the dashboard (when there is one) that the channel
// of subscription s, the i-th of n, is being opened, from since, those of
// opened being open already.
func (d *dashboard) connecting(f *config.File, s *config.Subscription, i, n int, opened []string, getenv func(string) string, since time.Time) {
	if d.p == nil {
		return
	}
	d.p.Send(tui.ConnectingMsg{Subscription: s.Name, Index: i, Of: n, Transport: string(s.Transport),
		Endpoint: (&transport.Target{F: f, S: s}).Endpoint(getenv), Since: since, Opened: opened})
}

// run ties the dashboard to the run, once every channel is open: the
// connecting line goes, the dashboard says "draining" when runCtx ends,
// and a dashboard that ends by itself (it failed) stops the run: the
// consumer drains.
func (d *dashboard) run(runCtx context.Context, stop func()) {
	if d.p == nil {
		return
	}
	d.p.Send(tui.ConnectedMsg{})
	go func() {
		select {
		case <-runCtx.Done():
			d.p.Send(tui.DrainingMsg{})
		case <-d.ctx.Done():
		}
	}()
	go func() {
		select {
		case <-d.done:
			stop()
		case <-runCtx.Done():
		}
	}()
}

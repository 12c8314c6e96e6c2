package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	tea "charm.land/bubbletea/v2"
	"github.com/mattn/go-isatty"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/tui"
)

// Stable log texts of the observability wiring.
const (
	logListenerStopFailed = "observability listener did not stop cleanly"
	logTUIFailed          = "dashboard failed"
)

// consumeObservers is consume's --listen and --tui wiring (issue 8): the
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
// listener. Nothing is built when neither is given.
func (o *consumeOptions) startObservers(ctx context.Context, logger *slog.Logger, subs []*config.Subscription) (*consumeObservers, error) {
	ob := &consumeObservers{depths: map[string]observe.DeadLetterDepther{}, logger: logger}
	if o.listen == "" && !o.tui {
		return ob, nil
	}
	if o.tui && !o.io.OutTTY {
		return nil, usageErr(errors.New("--tui draws a dashboard and needs a terminal on stdout; use --listen and `brighter watch` instead"))
	}
	ob.stream = observe.NewStream(0, observe.DefaultBacklog)
	for _, s := range subs {
		m := nativeLimit(s)
		ob.stream.Describe(s.Name, observe.SubscriptionInfo{Transport: string(s.Transport), Budget: s.RequeueCount, NativeLimit: m,
			EffectiveLimit: observe.EffectiveLimit(s.RequeueCount, m), DeadLetter: s.DeadLetterRoutingKey})
	}
	if o.listen == "" {
		return ob, nil
	}
	if _, err := observe.ListenAddr(o.listen); err != nil {
		return nil, usageErr(fmt.Errorf("--listen %w", err))
	}
	ob.metrics = observe.NewMetrics()
	ob.health = observe.NewHealth()
	ob.health.OnChange(ob.metrics.SetReady)
	for _, s := range subs {
		ob.metrics.Subscription(s.Name)
	}
	if err := ob.metrics.AddDropSource("events", ob.stream.Dropped); err != nil {
		return nil, failureErr(fmt.Errorf("--listen: %w", err))
	}
	srv := &observe.Server{Metrics: ob.metrics, Health: ob.health, Stream: ob.stream, Logger: logger}
	_, stop, err := srv.Start(ctx, o.listen)
	if err != nil {
		return nil, failureErr(fmt.Errorf("--listen: %w", err))
	}
	ob.stop = stop
	return ob, nil
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
func (ob *consumeObservers) addDepth(ts transports, s *config.Subscription, c broker.Consumer) {
	if ob.stream == nil || s.DeadLetterRoutingKey == "" {
		return
	}
	if d, ok := c.(observe.DeadLetterDepther); ok {
		ob.depths[s.Name] = d
		return
	}
	if mt, ok := ts[config.TransportMemory].(*memoryTransport); ok && s.Transport == config.TransportMemory {
		dlq := s.DeadLetterRoutingKey
		ob.depths[s.Name] = observe.DepthFunc(func(context.Context) (int64, error) { return int64(mt.broker().Depth(dlq)), nil })
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

// close stops the listener.
func (ob *consumeObservers) close(ctx context.Context) {
	if ob.stop == nil {
		return
	}
	if err := ob.stop(ctx); err != nil {
		ob.logger.Warn(logListenerStopFailed, "error", err)
	}
}

// quietForTUI keeps logs off a terminal the dashboard draws on: when stderr
// is a terminal, logs are discarded (redirect stderr to a file to keep
// them).
func quietForTUI(io *IOStreams, logger *slog.Logger) *slog.Logger {
	type fder interface{ Fd() uintptr }
	if f, ok := io.ErrOut.(fder); ok && isatty.IsTerminal(f.Fd()) {
		return slog.New(slog.DiscardHandler)
	}
	return logger
}

// startTUI runs the dashboard in-process, fed from the event stream, until
// runCtx ends; quitting it calls stop (a graceful drain). The returned
// function, called once the pumps have returned, ends it and waits.
func (o *consumeOptions) startTUI(runCtx context.Context, stop func(), ob *consumeObservers) func() {
	if !o.tui {
		return func() {}
	}
	model := tui.New(tui.Options{Title: "brighter consume", NoColor: !o.io.Color})
	p := tea.NewProgram(model, tea.WithContext(runCtx), tea.WithInput(o.io.In), tea.WithOutput(o.io.Out), tea.WithFPS(10))
	b := tui.NewBatcher(0, 0)
	go b.Run(runCtx, p.Send)
	go tui.FeedStream(runCtx, ob.stream.Subscribe(), b)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && runCtx.Err() == nil {
			ob.logger.Error(logTUIFailed, "error", err)
		}
		stop()
	}()
	return func() {
		stop()
		<-done
	}
}

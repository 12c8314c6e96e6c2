package consume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/handler"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/transport"
)

// Options are consume's flags and dependencies.
type Options struct {
	io            *iostreams.IOStreams
	global        *factory.Factory
	configPath    string
	subscriptions []string
	transports    transport.Registry
	// listen is --listen (observability address, "" = off); tui is --tui.
	listen string
	tui    bool
	// signals delivers the stop signals (cmdutil.StopSignals); tests may replace
	// it.
	signals func() (<-chan os.Signal, func())
	// exit ends the process on a second signal.
	exit func(code int)
}

// NewCmdConsume returns the consume command. runF, when not nil, is called
// with the parsed options instead of runConsume (a test checks the flags'
// parsing without running the pumps).
func NewCmdConsume(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	io := f.IOStreams
	o := &Options{io: io, global: f, transports: f.Transports(), exit: os.Exit, signals: func() (<-chan os.Signal, func()) {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, cmdutil.StopSignals()...)
		return ch, func() { signal.Stop(ch) }
	}}
	cmd := &cobra.Command{
		Use:   "consume",
		Short: "Run the message pump for the subscriptions in a subscriptions file",
		Long: `Run the message pump for one or more subscriptions of a subscriptions file.

Each message is handed to the subscription's handler (builtin, exec or http).
A deferred message is requeued until its delivery count reaches requeueCount,
then rejected with DeliveryError and routed to deadLetterRoutingKey with the
rejection metadata Brighter writes.

SIGINT, SIGTERM or SIGHUP (the terminal closed, an ssh session dropped)
stops receiving and lets in-flight messages finish within drainTimeout, and
a receive already waiting on the broker end (at most its
timeOut + 10s, 30s on SQS: "draining: waiting for the receive in flight to
return" says so), then exits 0. A handler still running when the drain ends is cut
off and its message released; an exec handler's process group is sent
SIGTERM, then SIGKILL after 2s, and consume never exits before it is gone. A
second signal cuts the handlers off that way at once and exits 1, leaving
unsettled messages to the broker. Signals within half a second of the first (timeout(1)
signals the command and then its process group) are the same stop. A signal
while the channels are still connecting gives up the connection at once and
exits 0 (nothing was received); a second one then exits 130 at once.

With --tui, the dashboard draws from the start: while the channels connect it
says to which transport and endpoint, and for how long; a start-up that fails
gives the terminal back and prints its error. q does what a signal does: while
connecting it gives the connection up; then the first drains, and the
dashboard says "draining (N in flight)..." until the process exits; q again
exits at once. Each subscription has a status line (connected, or failing
since when with the last error), and the last warnings and errors are at the
bottom.`,
		Example: `  # Run every subscription in brighter.yaml
  brighter consume --config brighter.yaml

  # Run one subscription, logging JSON at debug level
  brighter consume --config brighter.yaml --subscription orders --log-format json --log-level debug

  # Serve Prometheus metrics, health and the event stream on 127.0.0.1:9464
  brighter consume --config brighter.yaml --listen 9464`,
		Args: cmdutil.NoArgs("name subscriptions with -s/--subscription"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSubscriptionNames(cmd, o.subscriptions); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runConsume(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.configPath, "config", "c", cmdutil.DefaultConfigPath, "subscriptions file (- reads standard input)")
	cmd.Flags().StringSliceVarP(&o.subscriptions, "subscription", "s", nil, "run only these subscriptions (repeatable; default all)")
	_ = cmd.RegisterFlagCompletionFunc("subscription", cmdutil.SubscriptionNames(io))
	cmd.Flags().StringVar(&o.listen, "listen", "", "serve /metrics, /healthz, /readyz and /events on this address (a port alone means 127.0.0.1)")
	cmd.Flags().BoolVar(&o.tui, "tui", false, "show the live dashboard (brighter watch) in this terminal")
	return cmd
}

// checkSubscriptionNames refuses an empty name in -s/--subscription, a
// usage error (exit 2) naming the flag: an empty -s (a script's -s "$SUB"
// with SUB unset) would otherwise select nothing, which is every
// subscription.
func checkSubscriptionNames(cmd *cobra.Command, names []string) error {
	if !cmd.Flags().Changed("subscription") || (len(names) > 0 && !slices.Contains(names, "")) {
		return nil
	}
	return cmdutil.UsageErr(errors.New(`--subscription "": a subscription name is required (without -s/--subscription, consume runs every subscription)`))
}

// pumpOptions maps a subscription to the pump's options.
func pumpOptions(s *config.Subscription) pump.Options {
	return pump.Options{
		Subscription:                   s.Name,
		Variant:                        pump.Variant(s.MessagePumpType),
		NoOfPerformers:                 s.NoOfPerformers,
		BufferSize:                     s.BufferSize,
		TimeOut:                        s.TimeOut,
		RequeueCount:                   s.RequeueCount,
		RequeueDelay:                   s.RequeueDelay,
		UnacceptableMessageLimit:       s.UnacceptableMessageLimit,
		UnacceptableMessageLimitWindow: s.UnacceptableMessageLimitWindow,
		EmptyChannelDelay:              s.EmptyChannelDelay,
		ChannelFailureDelay:            s.ChannelFailureDelay,
		MaxChannelFailureDelay:         s.MaxChannelFailureDelay,
		CallTimeout:                    s.CallTimeout,
		StallAfter:                     s.StallAfter,
		DrainTimeout:                   s.DrainTimeout,
		MaxLeaseExtension:              maxLeaseExtension(s.MaxLeaseExtension),
	}
}

// maxLeaseExtension maps the file's maxLeaseExtension (0 = off) to the
// pump's (negative = off, 0 = the default).
func maxLeaseExtension(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// Stable log texts of consume.
const (
	logConsumeStarting = "consume starting"
	logConsumeStopping = "signal received; draining (send it again to exit at once)"
	logConsumeForced   = "second signal; exiting at once, unsettled messages are left to the broker"
	// logConsumeQuitKey is logged when q is pressed on the dashboard of
	// consume --tui: it drains as a signal does.
	logConsumeQuitKey = "dashboard quit; draining (press q again to exit at once)"
	// logConsumeQuitForced is logged when q is pressed again while
	// draining.
	logConsumeQuitForced = "dashboard quit again; exiting at once, unsettled messages are left to the broker"
	// forcedExitGrace is how long a second signal waits for cut-off
	// handlers before the process exits: an exec handler's group has
	// handler.DefaultKillGrace after SIGTERM before SIGKILL, and then its
	// message is released.
	forcedExitGrace = handler.DefaultKillGrace + 2*time.Second
	// logHandlerGroupsEnded is logged (Warning) when exec handlers'
	// process groups were still running when the pumps returned (or at a
	// second signal's exit) and consume ended them.
	logHandlerGroupsEnded = "exec handlers' process groups were still running at the end; ended them (SIGTERM, then SIGKILL after the grace) before exiting"
	// signalMergeWindow: a signal that arrives within this of the first is
	// the same stop, not a second signal. timeout(1) sends its signal to
	// the command and then to the whole process group, and a terminal's ^C
	// reaches every process of the group, so one stop may arrive twice in
	// the same moment.
	signalMergeWindow = cmdutil.SignalMergeWindow
	// logConsumeSignalMerged is logged (Info) for a signal within
	// signalMergeWindow of the first.
	logConsumeSignalMerged = cmdutil.LogSignalMerged
	logConsumeStopped      = "consume stopped"
	// logCloseFailed is logged (Error) when closing the channels opened
	// before a start-up failure fails.
	logCloseFailed = "close channel failed"
)

// errForcedStop ends a run a second stop request cut short (exit 1).
var errForcedStop = errors.New("stopped by a second signal; unsettled messages were left to the broker")

// endHandlerGroups ends the exec handler process groups still running
// (handler.Groups.End) and logs how many there were, if any.
func endHandlerGroups(logger *slog.Logger, groups *handler.Groups) {
	if n := groups.End(); n > 0 {
		logger.Warn(logHandlerGroupsEnded, "groups", n)
	}
}

// runConsume runs the pumps of the selected subscriptions until a stop
// request (SIGINT, SIGTERM, q on the dashboard) has drained them, or one
// of them fails: nil on a clean stop, a failure (exit 1) when a pump
// failed or a second request cut the drain short, a usage error (exit 2)
// when the file or the command line is wrong. Everything is built before
// any pump starts.
func runConsume(ctx context.Context, o *Options) error {
	if o.tui && !o.io.OutTTY {
		return cmdutil.UsageErr(errors.New("--tui draws a dashboard and needs a terminal on stdout; use --listen and `brighter watch` instead"))
	}
	logs, err := o.newLogs()
	if err != nil {
		return err
	}
	logger := logs.logger
	f, err := o.loadConfig()
	if err != nil {
		return err
	}
	subs, err := cmdutil.SelectSubscriptions(f, o.subscriptions)
	if err != nil {
		return cmdutil.UsageErr(err)
	}
	if err := logStartupFindings(logger, f, subs); err != nil {
		return err
	}
	obs, err := o.startObservers(ctx, logger, logs.stream, subs)
	if err != nil {
		return err
	}
	defer obs.close(context.WithoutCancel(ctx))
	if obs.metrics != nil {
		// Before any channel opens: the clients count from their first call.
		o.transports.CountCalls(obs.metrics)
	}
	tel, stopTelemetry, err := o.startTelemetry(ctx, logger, subs)
	if err != nil {
		return err
	}
	defer stopTelemetry()

	// q on the dashboard is a signal's twin: while connecting it gives the
	// connection up; then the first drains, a second exits at once. The
	// dashboard draws from before the first channel opens, saying which
	// one and for how long, so a slow broker is no blank screen.
	quitKeys := make(chan struct{}, 2)
	dash := o.startTUI(ctx, func() {
		select {
		case quitKeys <- struct{}{}:
		default:
		}
	}, obs, logs)
	// Runs after the defers below (the channels closed), before the
	// listener stops: the terminal is given back before the error, if
	// any, is printed.
	defer dash.close()

	// Build everything before any pump starts: a bad handler or transport
	// setting is a configuration error (exit 2) before messages move.
	type unit struct {
		sub  *config.Subscription
		ch   *transport.Channel
		pump *pump.Pump
	}
	var units []unit
	// Signals are watched from before the first channel opens: opening
	// may wait on the broker (up to the transport's call deadline), and a
	// stop meanwhile ends the run at once (startupWatch).
	sigs, unsubscribe := o.signals()
	defer unsubscribe()
	// A second request while connecting exits at once: the terminal back
	// first.
	openCtx, connected := startupWatch(ctx, logger, sigs, quitKeys, signalMergeWindow, func(code int) {
		dash.kill()
		o.exit(code)
	})
	// Runs after closeAll (defers run last-in first-out).
	defer o.transports.CloseClients(logger)
	// closeAll closes the channels opened so far, once: on a start-up
	// failure logging each close that fails (the start-up's error is the
	// one returned); after the run returning them (a memory channel that
	// could not write memory.output lost what it held).
	closed := false
	closeChannels := func() error {
		if closed {
			return nil
		}
		closed = true
		var errs []error
		for _, u := range units {
			if err := u.ch.Close(context.WithoutCancel(ctx)); err != nil {
				errs = append(errs, fmt.Errorf("subscription %s: close channel: %w", u.sub.Name, err))
			}
		}
		return errors.Join(errs...)
	}
	closeAll := func() {
		if err := closeChannels(); err != nil {
			logger.Error(logCloseFailed, "error", err)
		}
	}
	getenv := func(k string) string {
		v, _ := o.io.Getenv(k)
		return v
	}
	// Every exec handler's runs: their process groups are ended before
	// consume returns or exits, whether or not a pump waited for them.
	groups := handler.NewGroups()
	for i, s := range subs {
		sl := logger.With("subscription", s.Name)
		h, err := handler.New(s.Handler, sl, handler.WithRedactor(o.io.Redactor), handler.WithGroups(groups))
		if err != nil {
			closeAll()
			return cmdutil.UsageErr(fmt.Errorf("%s: subscription %s: handler: %w", s.Pos("handler"), s.Name, err))
		}
		factory, ok := o.transports[s.Transport]
		if !ok {
			closeAll()
			return cmdutil.UsageErr(fmt.Errorf("%s: subscription %s: transport %q is not available in this build", s.Pos("transport"), s.Name, s.Transport))
		}
		opened := make([]string, len(units))
		for j, u := range units {
			opened[j] = u.sub.Name
		}
		since := time.Now()
		dash.connecting(f, s, i+1, len(subs), opened, getenv, since)
		obs.connecting(s.Name, opened, since)
		ch, err := factory.Open(openCtx, f, s, sl)
		if err != nil {
			closeAll()
			if connected() {
				return startupInterrupted(s.Name)
			}
			return cmdutil.WrapExit(cmdutil.ExitFailure, err, "subscription %s: open channel", s.Name)
		}
		obs.addDepth(o.transports, s, ch.Consumer)
		popts := pumpOptions(s)
		popts.CutOffGrace = handler.CutOffGrace(s.Handler)
		p, err := pump.New(ch.Consumer, tel.Wrap(h), popts, append(obs.observers(pump.LogObserver{Logger: logger, StopErrorReported: true}), tel.Observers()...)...)
		if err != nil {
			_ = ch.Close(ctx)
			closeAll()
			return cmdutil.UsageErr(fmt.Errorf("%s: subscription %s: %w", s.Pos("messagePumpType"), s.Name, err))
		}
		units = append(units, unit{sub: s, ch: ch, pump: p})
	}
	defer closeAll()
	if connected() {
		return startupInterrupted(subs[len(subs)-1].Name)
	}

	obs.connected()

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	dash.run(runCtx, stop)
	sup := &Supervisor{
		Logger: logger, Signals: sigs, Quit: quitKeys, Stop: stop,
		CutOff: func() {
			for _, u := range units {
				u.pump.CutOff()
			}
		},
		EndHandlers: func() { endHandlerGroups(logger, groups) },
		Final: func(code int) {
			cmdutil.WriteFinalError(o.io.ErrOut, o.io.Redactor, o.global.LogFormat == "json", errForcedStop, code)
		},
		Restore: dash.kill, Exit: o.exit,
		MergeWindow: signalMergeWindow, Grace: forcedExitGrace,
	}
	sup.Start(runCtx)
	defer sup.Finish()

	logger.Info(logConsumeStarting, "config", f.Path, "subscriptions", len(units))
	obs.running(runCtx)
	// A drain that waits only for a receive in flight says so (logged,
	// and on the dashboard): an SQS long poll may hold the stop for up to
	// its timeOut, and a broker that does not answer it to its deadline.
	watched := make([]drainWatched, len(units))
	for i, u := range units {
		watched[i] = drainWatched{name: u.sub.Name, pump: u.pump}
	}
	pumpsReturned := make(chan struct{})
	go watchDrain(runCtx, pumpsReturned, logger, watched, dash.awaitingReceive)
	var wg sync.WaitGroup
	errs := make([]error, len(units))
	for i, u := range units {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = u.pump.Run(runCtx)
			// One pump failing stops the others: the process exits 1 and its
			// supervisor restarts it.
			if errs[i] != nil {
				stop()
			}
		}()
	}
	wg.Wait()
	// A handler a pump stopped waiting for may still be ending its
	// process group: nothing it started outlives consume.
	endHandlerGroups(logger, groups)
	close(pumpsReturned)
	sup.PumpsDone()
	// The terminal back before the last lines: they go to stderr again.
	dash.close()
	// After a second signal the run ends in failure however the pumps
	// returned: the process must not exit 0 before the exit above does.
	if sup.Forced() {
		// The Supervisor ends the process and writes its last line.
		sup.AwaitExit()
		return cmdutil.FailureErr(errForcedStop)
	}
	// The channels are closed before the run is called stopped: a close
	// that fails (memory.output not written) is a failure, exit 1. A
	// failure is said once, by the error this returns (the last line
	// brighter prints), not also in a log line, and the run is then not
	// logged as stopped.
	if err := errors.Join(append(errs, closeChannels())...); err != nil {
		return cmdutil.FailureErr(err)
	}
	logger.Info(logConsumeStopped)
	return nil
}

// logStartupFindings logs the findings of the lint rules once per
// subscription and rule (NFR-4), before any message moves, and returns an
// error (exit 2) naming every finding `brighter lint` reports as an Error:
// consume refuses what lint refuses (otherwise a dead-letter queue
// equal to the source would be logged and consumed anyway).
func logStartupFindings(logger *slog.Logger, f *config.File, subs []*config.Subscription) error {
	errs := logLintFindings(context.Background(), logger, defaultLintRules(), f, subs)
	if len(errs) == 0 {
		return nil
	}
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = fmt.Sprintf("%s: error %s: %s", e.Pos, e.RuleID, e.Message)
	}
	return cmdutil.UsageErr(fmt.Errorf("%s\nbrighter consume does not start a subscription that brighter lint reports as an error (brighter lint --explain RULE says why)", strings.Join(lines, "\n")))
}

// Package watch is `brighter watch`: the live dashboard (internal/tui) of
// one or more running consume processes, read from their /events streams
// and /metrics.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/tui"
)

// defaultWatchTarget is where `consume --listen 9464` serves.
const defaultWatchTarget = "http://127.0.0.1:9464"

// Options carries watch's flags and dependencies.
type Options struct {
	io      *iostreams.IOStreams
	global  *factory.Factory
	targets []string
	client  *http.Client
	// config is -c/--config, the subscriptions file of the other commands:
	// it names no --listen address, so watch does not read it (see
	// configWithoutTarget).
	config string
}

// NewCmdWatch returns the watch command. runF, when not nil, is called with
// the parsed options instead of runWatch (a test checks the flags' parsing
// without running the command).
func NewCmdWatch(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	io, g := f.IOStreams, f
	o := &Options{io: io, global: g, client: tui.NewWatchClient()}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "A live terminal dashboard of delivery counts, outcomes and DLQ depth",
		Long: `Watch one or more consumers started with --listen: their subscriptions
(rates, outcomes, budget R, native limit M, effective limit, DLQ depth),
the messages in flight and recently settled with each delivery count drawn
against its budget, and the rejections with reason and route.

Under each subscription a status line says connected, or failing since when
with the last error (and not ready once the consumer is stalled); while the
consumer still opens its channels, connecting (for how long) or waiting to
connect. The last warning and error log lines of the consumers are at the
bottom.

It reads each target's /events stream and /metrics. An unreachable target is
shown as such and retried until it answers: one that refuses the connection,
takes more than 5s to accept it, or accepts it and does not answer within 5s
(unreachable: no answer within 5s). An answered /events stream has no
deadline. NO_COLOR turns colour off.

Keys: / filter, s sort, p pause, tab switch panel, enter details, ? help, q quit.

Exit codes: 0 after q; 130 when ctrl+c, SIGINT, SIGTERM or SIGHUP interrupts it (a
second signal ends it at once); 1 when the dashboard fails; 2 for a usage
error (a bad --target, no terminal on stdout).`,
		Example: `  # A consumer on this machine
  brighter consume --config brighter.yaml --listen 9464 &
  brighter watch

  # Two replicas of the same consumer
  brighter watch --target http://orders-1.internal:9464 --target http://orders-2.internal:9464`,
		Args: cmdutil.NoArgs("give each consumer to watch with -t/--target URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := configWithoutTarget(cmd.Flags().Changed("config"), cmd.Flags().Changed("target"), o.config); err != nil {
				return cmdutil.UsageErr(err)
			}
			targets, err := normaliseTargets(o.targets)
			if err != nil {
				return cmdutil.UsageErr(err)
			}
			o.targets = targets
			if runF != nil {
				return runF(o)
			}
			return runWatch(cmd.Context(), o)
		},
	}
	cmd.Flags().StringSliceVarP(&o.targets, "target", "t", []string{defaultWatchTarget}, "base URL of a consumer's --listen address (repeatable)")
	// -c/--config is taken (the flag every command shares) but hidden: the
	// subscriptions file names no --listen address.
	cmd.Flags().StringVarP(&o.config, "config", "c", "", "subscriptions file: not read by watch, which needs --target")
	_ = cmd.Flags().MarkHidden("config")
	return cmd
}

// configWithoutTarget is the usage error of -c/--config given without
// --target: watch reads a running consume's --listen address, which the
// subscriptions file does not name, so the file cannot say what to watch.
// With --target as well the file is not read and nil is returned, so a
// script passing -c to every command works.
func configWithoutTarget(configSet, targetSet bool, config string) error {
	if !configSet || targetSet {
		return nil
	}
	return fmt.Errorf("--config %s: watch reads a running consume's --listen address, and the subscriptions file names none: "+
		"give --target HOST:PORT, the address given to consume --listen (default %s)", redact.Cut(config), defaultWatchTarget)
}

// normaliseTargets checks each --target: an http(s) URL with a host; an
// address without a scheme is read as consume --listen reads it
// (observe.ListenAddr: a port alone, "9464" or ":9464", means
// 127.0.0.1:9464; host:port is kept) and gets http://. A port alone that
// is not a valid port is refused with ListenAddr's error.
func normaliseTargets(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, errors.New("--target: give at least one URL, e.g. " + defaultWatchTarget)
	}
	var out []string
	for _, t := range in {
		if !strings.Contains(t, "://") {
			addr, err := observe.ListenAddr(t)
			switch {
			case err == nil:
				t = addr
			case isPortOnly(t):
				return nil, fmt.Errorf("--target: %w", err)
			}
			t = "http://" + t
		}
		u, err := url.Parse(t)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--target %q: want an http or https URL such as %s", redact.Quoted(t), defaultWatchTarget)
		}
		out = append(out, strings.TrimRight(u.String(), "/"))
	}
	return out, nil
}

// isPortOnly reports whether s is a port alone, "9464" or ":9464" (digits
// only), as consume --listen takes one.
func isPortOnly(s string) bool {
	p := strings.TrimPrefix(s, ":")
	return p != "" && strings.Trim(p, "0123456789") == ""
}

// runWatch draws the dashboard of the targets until the user quits it or
// ctx ends; it needs a terminal on stdout. q quits (nil: exit 0); ctrl+c,
// SIGINT, SIGTERM or SIGHUP interrupt it (cmdutil.ExitInterrupted, 130, as every
// interrupted command), a second signal ending it at once.
func runWatch(ctx context.Context, o *Options) error {
	if !o.io.OutTTY {
		return cmdutil.UsageErr(errors.New("watch draws a dashboard and needs a terminal on stdout; scrape /metrics or read /events for machine use"))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	model := tui.New(tui.Options{Targets: o.targets, NoColor: !o.io.Color})
	// Signals are the command's, not the dashboard's (which would take
	// SIGTERM for q): the first quits the dashboard, a second kills it.
	// The size is the terminal's, 80x24 until it says (or when it cannot,
	// as on an output that is no terminal), as consume --tui's.
	p := tea.NewProgram(model, tea.WithContext(ctx), tea.WithInput(o.io.In), tea.WithOutput(o.io.Out), tea.WithFPS(10), tea.WithoutSignalHandler(),
		tea.WithWindowSize(tui.DefaultWidth, tui.DefaultHeight))
	sigs, unsubscribe := cmdutil.NotifySignals(o.global.Signals)
	var signalled atomic.Bool
	ended := make(chan struct{})
	go func() {
		for {
			select {
			case <-sigs:
				if signalled.Swap(true) {
					p.Kill()
					return
				}
				go p.Quit() // it waits for the event loop, which may not run yet
			case <-ended:
				return
			}
		}
	}()
	defer func() {
		close(ended)
		unsubscribe()
	}()
	// One batcher per target: the dashboard keeps each one's channel
	// status apart.
	for _, t := range o.targets {
		b := tui.NewBatcher(0, 0)
		b.Target = t
		go b.Run(ctx, p.Send)
		go tui.Watch(ctx, o.client, t, b, p.Send)
	}
	final, err := p.Run()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil {
		return cmdutil.FailureErr(fmt.Errorf("watch: %w", err))
	}
	if fm, ok := final.(interface{ Interrupted() bool }); signalled.Load() || (ok && fm.Interrupted()) {
		return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: errors.New("watch: interrupted")}
	}
	return nil
}

// Package demo is `brighter demo`: the poison-message story
// (internal/demo) told on an in-process Pub/Sub emulator, or on a running
// one with --emulator.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/demo"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
)

// Options carries demo's flags and dependencies.
type Options struct {
	io          *iostreams.IOStreams
	global      *factory.Factory
	keepRunning bool
	listen      string
	emulator    string
	// project names the project on a running emulator (--emulator); tests
	// may replace it.
	project     func() string
	mode        string
	variant     string
	writeConfig string
	// overwrite is --overwrite: an existing --write-config file is
	// replaced (without it the demo refuses it, exit 2).
	overwrite bool
	timeout   time.Duration
	// wait blocks a --keep-running demo until ctx ends (the first SIGINT
	// or SIGTERM ends it); tests may replace it.
	wait func(ctx context.Context)
}

// NewCmdDemo returns the demo command. runF, when not nil, is called with
// the parsed options instead of runDemo (a test checks the flags' parsing
// without running the command).
func NewCmdDemo(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	io, g := f.IOStreams, f
	o := &Options{io: io, global: g, project: func() string {
		// A project of its own per run: nothing an earlier run left on the
		// emulator joins the story.
		return fmt.Sprintf("%s-%d", demo.Project, time.Now().Unix())
	}, wait: func(ctx context.Context) { <-ctx.Done() }}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch a poison message run down its budget on an embedded Pub/Sub emulator",
		Long: `Tell the whole story on an in-process Google Cloud Pub/Sub emulator: no cloud,
no Docker, nothing to configure.

The demo creates a topic and a subscription with requeueCount 3 and a native
DeadLetterPolicy of 5 attempts, publishes four orders, and runs the message
pump with a handler that acknowledges the good ones, defers the poison one
every time and rejects the malformed one as unacceptable. It narrates each
delivery with its delivery count, the budget firing on the poison order's
third delivery, and the routed messages with their rejection metadata, read
back through the ordinary consumer. It ends by itself, exit status 0.

With --emulator HOST:PORT the same story runs on a Google Pub/Sub emulator
that is already running (gcloud beta emulators pubsub start), in a project
of its own (brighter-demo-<unix time>); the embedded emulator needs no Java
and stays the default.

The narration goes to stdout; logs go to stderr. With --keep-running the
emulator stays up afterwards, and the demo prints the PUBSUB_EMULATOR_HOST
and a subscriptions file to use with brighter consume, send and dlq; Ctrl-C
(SIGINT, SIGTERM or SIGHUP) then stops the emulator, removes the subscriptions file
the demo wrote in the temporary directory (a --write-config file stays) and
exits 0. A signal during the story stops its pump and the emulator: exit 130.`,
		Example: `  # The story, start to finish, in a few seconds
  brighter demo

  # Keep the emulator up and play with it from another terminal
  brighter demo --keep-running
  brighter send --config /tmp/brighter-demo-123.yaml --subscription orders --body '{"orderId": 7}'
  brighter consume --config /tmp/brighter-demo-123.yaml
  brighter dlq peek --config /tmp/brighter-demo-123.yaml orders

  # The same story on Google's Pub/Sub emulator, started in another terminal
  gcloud beta emulators pubsub start
  brighter demo --emulator localhost:8085`,
		Args: cmdutil.NoArgs(""),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.emulator != "" && cmd.Flags().Changed("listen") {
				return cmdutil.UsageErr(fmt.Errorf("--listen and --emulator: --listen places the embedded emulator, --emulator names a running one; give one"))
			}
			if runF != nil {
				return runF(o)
			}
			return runDemo(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.keepRunning, "keep-running", false, "leave the emulator running after the story (until Ctrl-C)")
	fl.StringVar(&o.listen, "listen", "127.0.0.1:0", "the emulator's listen address (port 0: a free port)")
	fl.StringVar(&o.emulator, "emulator", "", "tell the story on the running Google Pub/Sub emulator at this host:port instead of the embedded one")
	fl.StringVar(&o.mode, "mode", "pull", "Pub/Sub consumer: pull (unary pull) or stream (streaming pull)")
	fl.StringVar(&o.variant, "pump", string(pump.Reactor), "pump variant: reactor or proactor")
	fl.StringVar(&o.writeConfig, "write-config", "", "with --keep-running, write the subscriptions file here (default: a new brighter-demo-*.yaml in the temporary directory, printed); an existing file is refused unless --overwrite")
	fl.BoolVar(&o.overwrite, "overwrite", false, "replace an existing --write-config file")
	fl.DurationVar(&o.timeout, "timeout", time.Minute, "give up when the story has not ended after this long")
	cmdutil.CompleteValues(cmd, []string{"pull", "stream"}, "mode")
	cmdutil.CompleteValues(cmd, []string{string(pump.Reactor), string(pump.Proactor)}, "pump")
	return cmd
}

// runDemo tells the story (or, with --keep-running, keeps the emulator
// and writes a subscriptions file for it) within --timeout.
func runDemo(ctx context.Context, o *Options) error {
	logger, err := o.global.Logger()
	if err != nil {
		return err
	}
	v := pump.Variant(o.variant)
	if v != pump.Reactor && v != pump.Proactor {
		return cmdutil.UsageErr(fmt.Errorf("--pump %q: valid values are reactor, proactor", redact.Quoted(o.variant)))
	}
	if o.mode != "stream" && o.mode != "pull" {
		return cmdutil.UsageErr(fmt.Errorf("--mode %q: valid values are pull, stream", redact.Quoted(o.mode)))
	}
	if err := cmdutil.PositiveDuration("timeout", o.timeout, ""); err != nil {
		return err
	}
	if o.writeConfig != "" && !o.keepRunning {
		return cmdutil.UsageErr(fmt.Errorf("--write-config needs --keep-running: the file names an emulator that only lives while the demo keeps running"))
	}
	if o.overwrite && o.writeConfig == "" {
		return cmdutil.UsageErr(fmt.Errorf("--overwrite needs --write-config: the demo's own file is always a new one"))
	}
	if o.writeConfig != "" && !o.overwrite {
		// Refused before the story runs, and again when the file is
		// written (created only if it does not exist).
		if _, err := os.Lstat(o.writeConfig); err == nil {
			return cmdutil.UsageErr(existingConfig(o.writeConfig))
		}
	}
	if o.emulator != "" {
		if scheme, rest, ok := strings.Cut(o.emulator, "://"); ok {
			// PUBSUB_EMULATOR_HOST's form: a URL is a common slip.
			return cmdutil.UsageErr(fmt.Errorf("--emulator %q: give host:port without the %s:// scheme (--emulator %s), as PUBSUB_EMULATOR_HOST takes it", redact.Quoted(o.emulator), redact.Cut(scheme), redact.Cut(strings.TrimSuffix(rest, "/"))))
		}
		if _, _, err := net.SplitHostPort(o.emulator); err != nil {
			return cmdutil.UsageErr(fmt.Errorf("--emulator %q: want host:port: %w", redact.Quoted(o.emulator), err))
		}
	}
	do := demo.Options{
		Out: o.io.Out, Logger: logger, Color: o.io.Color, Listen: o.listen,
		Mode: o.mode, Variant: v, Timeout: o.timeout, Emulator: o.emulator,
	}
	if o.emulator != "" {
		do.Project = o.project()
	}
	// A signal stops the story (its pump and consumers) and the emulator
	// at any point; a --keep-running demo waits for one.
	ctx, interrupted, stopWatch := cmdutil.StopOnSignals(ctx, logger, logDemoStopping, o.global.Signals, o.global.Exit)
	defer stopWatch()
	d, err := demo.Start(ctx, do)
	if err != nil {
		if interrupted() {
			return demoInterrupted()
		}
		return cmdutil.FailureErr(err)
	}
	defer d.Close()
	if _, err := d.Run(ctx); err != nil {
		if interrupted() {
			return demoInterrupted()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return cmdutil.FailureErr(fmt.Errorf("%w (the story did not finish within --timeout %s)", err, o.timeout))
		}
		return cmdutil.FailureErr(err)
	}
	if !o.keepRunning {
		d.Line("")
		d.Line("Run it again with --keep-running to keep the emulator up and try brighter consume, send and dlq against it.")
		return nil
	}
	path, err := writeDemoConfig(o.writeConfig, d.SubscriptionsFile(), o.overwrite)
	if errors.Is(err, os.ErrExist) {
		return cmdutil.UsageErr(existingConfig(o.writeConfig))
	}
	if err != nil {
		return cmdutil.FailureErr(err)
	}
	if o.writeConfig == "" && o.emulator == "" {
		// The file is the demo's own and names an emulator that ends
		// with it: it goes when the demo does, however the wait ends
		// (not on a second signal, which exits at once).
		defer func() {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				logger.Warn(logDemoConfigLeft, "path", path, "error", err)
			}
		}()
	}
	if o.emulator != "" {
		d.Heading("The emulator at " + o.emulator + " keeps running")
	} else {
		d.Heading("The emulator keeps running")
	}
	d.Line("  export PUBSUB_EMULATOR_HOST=%s", d.EmulatorHost())
	d.Line("  subscriptions file: %s (it names the emulator itself, so the export is only for other tools)", path)
	d.Line("")
	d.Line("Try, in another terminal:")
	d.Line("  brighter send --config %s --subscription orders --body '{\"orderId\": 7}'", path)
	d.Line("  brighter consume --config %s     # a defer handler: the message is dead-lettered after 3 deliveries", path)
	d.Line("  brighter dlq peek --config %s orders", path)
	if o.emulator != "" {
		// The emulator is the user's: it runs on without the demo.
		return nil
	}
	d.Line("")
	d.Line("Press Ctrl-C to stop the emulator.")
	o.wait(ctx)
	return nil
}

// Stable texts of demo's signal handling.
const (
	// logDemoStopping is logged (Warning) at the first SIGINT/SIGTERM:
	// the story's pump stops, the embedded emulator shuts down and the
	// subscriptions file the demo wrote for it is removed.
	logDemoStopping = "signal received; stopping the demo and its emulator (send it again to exit at once)"
	// logDemoConfigLeft is logged (Warning) when the demo's own
	// subscriptions file could not be removed at its end.
	logDemoConfigLeft = "could not remove the demo's subscriptions file"
)

// demoInterrupted is the end of a story a signal interrupted: exit 130.
func demoInterrupted() error {
	return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: errors.New("demo: interrupted; the story was stopped and its emulator shut down")}
}

// writeDemoConfig writes the demo's subscriptions file to path, or, when
// path is "", to a new file of its own in the temporary directory
// (brighter-demo-*.yaml), never a fixed name another user or run could own
// or race. An existing path is replaced only with overwrite; otherwise it
// is left unchanged and the error wraps os.ErrExist. It returns the path
// written.
func writeDemoConfig(path string, content []byte, overwrite bool) (string, error) {
	if path != "" {
		flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if !overwrite {
			flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
		}
		f, err := os.OpenFile(path, flag, 0o644)
		if err != nil {
			return "", fmt.Errorf("write the demo's subscriptions file: %w", err)
		}
		if _, err := f.Write(content); err != nil {
			_ = f.Close()
			return "", fmt.Errorf("write the demo's subscriptions file %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return "", fmt.Errorf("write the demo's subscriptions file %s: %w", path, err)
		}
		return path, nil
	}
	f, err := os.CreateTemp("", "brighter-demo-*.yaml")
	if err != nil {
		return "", fmt.Errorf("write the demo's subscriptions file: %w", err)
	}
	if _, err := f.Write(content); err != nil {
		_ = f.Close()
		return "", fmt.Errorf("write the demo's subscriptions file %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write the demo's subscriptions file %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// existingConfig is the usage error of a --write-config file that exists
// without --overwrite: nothing was run and the file is unchanged.
func existingConfig(path string) error {
	return fmt.Errorf("--write-config %s: the file exists; refusing to overwrite it (give --overwrite to replace it, or another path): nothing was run and the file is unchanged", redact.Cut(path))
}

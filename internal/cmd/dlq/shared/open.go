package shared

// dlqSetup is what every dlq command builds before it reads or publishes:
// the logger the global flags ask for, the selection from the filter flags,
// and the destination resolved with its transport's dlq support.
type dlqSetup struct {
	logger *slog.Logger
	f      inspect.Filter
	t      *dlqTarget
	dt     dlqTransport
}

// setup builds the logger and the filter, runs checks (the command's own
// flag checks, in order; each returns a usage error), then resolves arg
// into a target; it reads nothing. The first error is returned as is.
func (o *dlqOptions) setup(arg string, checks ...func() error) (*dlqSetup, error) {
	logger, err := o.global.Logger()
	if err != nil {
		return nil, err
	}
	f, err := o.filter()
	if err != nil {
		return nil, err
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return nil, err
		}
	}
	t, dt, err := o.target(arg)
	if err != nil {
		return nil, err
	}
	return &dlqSetup{logger: logger, f: f, t: t, dt: dt}, nil
}

// target resolves the argument, checks the flags against its transport and
// returns the transport's dlq support; it reads nothing.
func (o *dlqOptions) target(arg string) (*dlqTarget, dlqTransport, error) {
	t, err := o.resolve(arg)
	if err != nil {
		return nil, nil, err
	}
	if err := o.checkTarget(t); err != nil {
		return nil, nil, err
	}
	factory, err := o.transports.Get(t.S)
	if err != nil {
		return nil, nil, cmdutil.ExitCoded(err)
	}
	return t, factory, nil
}

// openReader opens the transport's reader over t.
func (o *dlqOptions) openReader(ctx context.Context, t *dlqTarget, dt dlqTransport, rewrite bool, logger *slog.Logger) (*openedChannel, error) {
	ch, err := dt.DLQReader(ctx, t, dlqReadOptions{Visibility: o.visibility, Wait: o.wait, Rewrite: rewrite}, logger)
	if err != nil {
		if _, ok := cmdutil.AsExitError(err); ok {
			return nil, cmdutil.ExitCoded(err)
		}
		return nil, cmdutil.FailureErr(fmt.Errorf("%s: open: %w", t.URL, err))
	}
	return ch, nil
}

// noteHeld says on w, after a scan of t, how many messages another reader
// held invisible when the scan began (openedChannel.held): the scan could
// not see them, so an empty or short result is not the whole destination.
// It says nothing when none were held or the transport cannot
// tell.
func noteHeld(w io.Writer, t *dlqTarget, ch *openedChannel) {
	if s := heldNote(ch.Held); s != "" {
		fmt.Fprintf(w, "%s: %s\n", t.URL, s)
	}
}

// heldNote is noteHeld's text for held messages, "" for none.
func heldNote(held int64) string {
	if held <= 0 {
		return ""
	}
	return plural(int(held), "more message") + " held invisible by another reader when this one began (a killed replay or archive, a running scan, or a consumer): not read; they come back when their visibility timeout lapses"
}

func (o *dlqOptions) source(t *dlqTarget, ch *openedChannel, logger *slog.Logger) *inspect.Source {
	return &inspect.Source{Consumer: ch.Consumer, Name: t.URL, Wait: o.wait, ShortPoll: ch.ShortPoll, Logger: logger}
}

func (o *dlqOptions) checkOutput() error { return cmdutil.ParseOutput(cmdutil.ScanFormats, &o.output) }

// newScanCmd completes cmd, a dlq command that scans a destination and
// removes nothing (peek, stats): it takes the destination as at most one
// argument, has the common flags and --output, and runs scan over the
// destination opened for reading, closing it afterwards.
func (o *dlqOptions) newScanCmd(cmd *cobra.Command, scan func(rs *readScan) error) *cobra.Command {
	cmd.Args = cobra.MaximumNArgs(1)
	cmd.RunE = o.runWith(func(cmd *cobra.Command, dest string) error {
		rs, err := o.openReadScan(cmd.Context(), dest)
		if err != nil {
			return err
		}
		defer rs.done()
		return scan(rs)
	})
	o.addCommon(cmd)
	o.addOutput(cmd)
	return cmd
}

// readScan is what peek and stats share before their scan: the checked
// --output, the filter, the destination opened for reading and its
// source, a context that the first SIGINT or SIGTERM cancels, and stderr
// for the summary. done closes the channel and stops listening for
// signals.
type readScan struct {
	f      inspect.Filter
	t      *dlqTarget
	ch     *openedChannel
	source *inspect.Source
	ctx    context.Context
	done   func()
	errOut io.Writer
}

// summarise prints the scan's summary line on stderr: the destination's
// URL, ": ", then format with args.
func (rs *readScan) summarise(format string, args ...any) {
	fmt.Fprintf(rs.errOut, "%s: %s\n", rs.t.URL, fmt.Sprintf(format, args...))
}

func (o *dlqOptions) openReadScan(ctx context.Context, arg string) (*readScan, error) {
	su, err := o.setup(arg, o.checkOutput)
	if err != nil {
		return nil, err
	}
	f, t, logger := su.f, su.t, su.logger
	ch, err := o.openReader(ctx, t, su.dt, false, logger)
	if err != nil {
		return nil, err
	}
	sctx, stop := o.interruptible(ctx, logger)
	return &readScan{f: f, t: t, ch: ch, source: o.source(t, ch, logger), ctx: sctx, errOut: o.io.ErrOut, done: func() {
		stop()
		ch.Close(context.WithoutCancel(ctx))
	}}, nil
}

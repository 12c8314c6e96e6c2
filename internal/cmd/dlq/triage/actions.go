package triage

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/transport"
)

// The console's actions on its destination: resolving it, opening it for
// one action and reading it (Load).

// actions resolves arg as dlq replay does (its refusals are usage
// errors) and returns the console's actions on it.
func (o *Options) actions(ctx context.Context, arg string, logger *slog.Logger) (*triageActions, error) {
	t, dt, err := o.Target(arg)
	if err != nil {
		return nil, err
	}
	// A fan-out refusal does not stop the console opening: it refuses
	// only the replays (and edits), so the dead letters can still be read,
	// archived and purged.
	to, allow, guard, refused, err := o.ReplayTargetOrRefusal(ctx, t, dt, logger)
	if err != nil {
		return nil, err
	}
	return &triageActions{o: o, t: t, dt: dt, to: to, allow: allow, guard: guard, refused: refused, logger: logger, history: o.RetryHistory(t)}, nil
}

// triageActions are the console's actions on one destination: each opens
// the destination, does its scan (which releases what it read) and closes
// it again.
type triageActions struct {
	o     *Options
	t     *transport.Target
	dt    transport.Transport
	to    string
	allow func(string) bool
	// guard is the fan-out guard (nil with --to): it routes a copy to the
	// failed subscription's own queue where the transport has one.
	guard *shared.FanOutGuard
	// refused is the fan-out guard's refusal of every replay from this
	// destination (nil when replays may go): the console opens to look,
	// and each replay or edit answers with it.
	refused error
	logger  *slog.Logger
	// audit, with --log-file, gets one LogAudit record per action (nil:
	// none).
	audit *slog.Logger
	// running counts the actions under way (acting) and the opens of the
	// destination (Open): triage waits for them (their releases and audit
	// records) after the console ends, so nothing stays held.
	running sync.WaitGroup
	// held is transport.Channel.Held of the last Load (LoadNote).
	held atomic.Int64
	// history is the retry history the console's replays record into and
	// its message view reads (nil: none kept).
	history *inspect.RetryHistory
	// reread is set after the first Load: every later one (a refresh,
	// ctrl+r, the read after an action) releases each receive at once.
	reread atomic.Bool
}

// acting counts an action as running until the returned function is
// called (after its audit record): triage waits for it after the console
// ends, so an action stopped by ctrl+c or a signal still writes its
// record.
func (a *triageActions) acting() (done func()) {
	a.running.Add(1)
	return a.running.Done
}

// LoadNote implements triage.LoadNoter: how many messages another reader
// held invisible when the last Load began (SQS only), "" for none.
func (a *triageActions) LoadNote() string { return shared.HeldNote(a.held.Load()) }

// Source implements triage.Actions.
func (a *triageActions) Source() string { return a.t.URL }

// Open opens the destination for one action; held is how many messages
// another reader held invisible as it opened (transport.Channel.Held).
// Until the returned close is called the action counts as running.
func (a *triageActions) Open(ctx context.Context, rewrite bool) (src *inspect.Source, held int64, closeFn func() error, err error) {
	a.running.Add(1)
	ch, err := a.o.OpenReader(ctx, a.t, a.dt, rewrite, a.logger)
	if err != nil {
		a.running.Done()
		return nil, 0, nil, err
	}
	return a.o.Source(a.t, ch, a.logger), ch.Held, func() error {
		defer a.running.Done()
		return ch.Close(context.WithoutCancel(ctx))
	}, nil
}

// collect is a peek Exporter that keeps copies of the messages.
type collect []*message.Message

func (c *collect) Write(m *message.Message) error { *c = append(*c, m.Clone()); return nil }
func (c *collect) Flush() error                   { return nil }

// Load implements triage.Actions: a peek of the command's filter.
func (a *triageActions) Load(ctx context.Context) ([]*message.Message, error) {
	f, err := a.o.Filter()
	if err != nil {
		return nil, err
	}
	src, held, closeSrc, err := a.Open(ctx, false)
	if err != nil {
		return nil, err
	}
	a.held.Store(held)
	// A re-read releases what each receive brought at once, so a console
	// refreshing every few seconds never keeps the dead letters from
	// another reader (inspect.Source.ReleaseEach). Not on RocketMQ (a
	// reader group, t.Group): there every receive is a delivery attempt of
	// the reader group, and a re-read receiving each message several times
	// would spend its attempts (16, then the broker moves it to
	// %DLQ%<group>) several times faster.
	src.ReleaseEach = a.reread.Swap(true) && a.t.Group == ""
	var out collect
	_, perr := inspect.Peek(ctx, src, f, &out)
	return out, errors.Join(perr, closeSrc())
}

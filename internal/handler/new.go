package handler

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
)

// Option changes how New builds a handler.
type Option func(*options)

type options struct {
	red    *redact.Redactor
	groups *Groups
}

// WithGroups gives New the command's Groups: an exec handler records the
// process group of each run in it while the run is under way, so that the
// command can end them all before it exits (Groups.End).
func WithGroups(g *Groups) Option { return func(o *options) { o.groups = g } }

// WithRedactor gives New the run's Redactor (every secret of the
// subscriptions file, config.File.Secrets, and the AWS keys of the
// environment): the reasons and errors of the handler New builds, and the
// lines the exec and http adapters log, are masked with its secrets as
// well as the handler's own, before the pump stores them anywhere (the
// rejection message on the dead-letter copy, /events, the logs). Secrets
// added to it later are masked too.
func WithRedactor(r *redact.Redactor) Option { return func(o *options) { o.red = r } }

// New builds the handler a subscription's handler block describes: Builtin
// (or ScriptItems when the block has a script), Exec or HTTP, with the
// block's timeout. logger receives the adapter's lines. It returns an error
// for an unknown type and passes on the adapter's own errors (an unknown
// builtin, a command not found, a bad URL, unreadable TLS files), so a bad
// handler is reported before any broker call.
//
// The handler returned masks the secrets it knows (its own: an exec
// handler's env values and the inherited AWS keys, an http handler's
// header values and URL parts; the run's, given by WithRedactor) in every
// Result it returns: the text the pump stores holds none of them.
func New(cfg config.Handler, logger *slog.Logger, opts ...Option) (pump.Handler, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var (
		h   pump.Handler
		err error
	)
	switch cfg.Type {
	case config.HandlerBuiltin:
		if len(cfg.Script) > 0 {
			h, err = ScriptItems(cfg.Script, logger)
		} else {
			h, err = Builtin(cfg.Name, logger)
		}
	case config.HandlerExec:
		env := make([]string, 0, len(cfg.Env))
		for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
			env = append(env, k+"="+cfg.Env[k])
		}
		h, err = Exec(ExecOptions{Command: cfg.Command, Args: cfg.Args, Env: env, Timeout: cfg.Timeout, Logger: logger, Redactor: o.red, Groups: o.groups})
	case config.HandlerHTTP:
		hopts := HTTPOptions{URL: cfg.URL, Headers: cfg.Headers, Timeout: cfg.Timeout, Logger: logger, Redactor: o.red}
		if cfg.TLS != nil {
			hopts.TLS = TLSOptions{CAFile: cfg.TLS.CAFile, CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile, InsecureSkipVerify: cfg.TLS.InsecureSkipVerify}
		}
		h, err = HTTP(hopts)
	default:
		return nil, fmt.Errorf("unknown handler type %q: valid types are %s, %s, %s", cfg.Type, config.HandlerBuiltin, config.HandlerExec, config.HandlerHTTP)
	}
	if err != nil {
		if cfg.Type == config.HandlerBuiltin {
			return nil, fmt.Errorf("builtin handler: %w", err)
		}
		return nil, err // the exec and http adapters name themselves
	}
	if cfg.Type == config.HandlerBuiltin && o.red != nil {
		// The exec and http adapters mask their own results; a builtin's
		// script may quote a ${VAR} value.
		h = Redacted(h, o.red)
	}
	return h, nil
}

// Redacted returns h with the Reason and the error text of every Result
// it returns passed through r (r.String): the one place a handler's text
// is masked before the pump stores it. The error still unwraps to h's
// for errors.Is and errors.As. A nil r applies the URL rule only.
func Redacted(h pump.Handler, r *redact.Redactor) pump.Handler {
	return func(ctx context.Context, m *message.Message) pump.Result {
		res := h(ctx, m)
		res.Reason = r.String(res.Reason)
		if res.Err != nil {
			if text := r.String(res.Err.Error()); text != res.Err.Error() {
				res.Err = redactedError{err: res.Err, text: text}
			}
		}
		return res
	}
}

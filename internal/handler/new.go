package handler

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/pump"
)

// New builds the handler a subscription's handler block describes: Builtin
// (or ScriptItems when the block has a script), Exec or HTTP, with the
// block's timeout. logger receives the adapter's lines. It returns an error
// for an unknown type and passes on the adapter's own errors (an unknown
// builtin, a command not found, a bad URL, unreadable TLS files), so a bad
// handler is reported before any broker call.
func New(cfg config.Handler, logger *slog.Logger) (pump.Handler, error) {
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
		h, err = Exec(ExecOptions{Command: cfg.Command, Args: cfg.Args, Env: env, Timeout: cfg.Timeout, Logger: logger})
	case config.HandlerHTTP:
		opts := HTTPOptions{URL: cfg.URL, Headers: cfg.Headers, Timeout: cfg.Timeout, Logger: logger}
		if cfg.TLS != nil {
			opts.TLS = TLSOptions{CAFile: cfg.TLS.CAFile, CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile, InsecureSkipVerify: cfg.TLS.InsecureSkipVerify}
		}
		h, err = HTTP(opts)
	default:
		return nil, fmt.Errorf("unknown handler type %q: valid types are %s, %s, %s", cfg.Type, config.HandlerBuiltin, config.HandlerExec, config.HandlerHTTP)
	}
	if err != nil {
		if cfg.Type == config.HandlerBuiltin {
			return nil, fmt.Errorf("builtin handler: %w", err)
		}
		return nil, err // the exec and http adapters name themselves
	}
	return h, nil
}

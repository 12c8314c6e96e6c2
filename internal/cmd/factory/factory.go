// Package factory is what every command gets, as gh's cmdutil.Factory is:
// the IOStreams, the build's version, the global log flags and the logger
// they ask for, and the transport registry (internal/transport). main
// builds one Factory and hands it to the root command, which hands it to
// each command's NewCmd function; nothing of it is a global, so a test
// builds its own.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/cmd/cmdutil, internal/cmd/iostreams, internal/observe,
// internal/redact, internal/transport
//
// Must not import: internal/cmd/root
package factory

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

// Factory carries the dependencies every command gets.
type Factory struct {
	// IOStreams are the run's streams, environment and redactor.
	IOStreams *iostreams.IOStreams
	// BuildVersion and BuildCommit are the -ldflags values of main's
	// version and commit ("" when the build set none).
	BuildVersion, BuildCommit string
	// LogFormat and LogLevel are the root's --log-format and --log-level.
	LogFormat, LogLevel string
	// Transports returns a fresh transport registry (no state shared
	// between commands or tests).
	Transports func() transport.Registry
	// Signals, when not nil, replaces the process's SIGINT and SIGTERM
	// for the commands that stop on them (the dlq verbs, send, lint --live,
	// demo): it returns the
	// channel they arrive on and a function that stops the delivery. Nil
	// (as New leaves it): the process's own signals. Tests inject signals
	// with it.
	Signals func() (<-chan os.Signal, func())
	// Exit, when not nil, replaces os.Exit where a command ends the process
	// at once (a second signal to a dlq verb, send, lint --live or demo),
	// with the exit code. Nil: os.Exit.
	Exit func(code int)
}

// New returns the Factory of a run on io, with the -ldflags version and
// commit, the default log flags and internal/transport's registry.
func New(io *iostreams.IOStreams, buildVersion, buildCommit string) *Factory {
	return &Factory{
		IOStreams: io, BuildVersion: buildVersion, BuildCommit: buildCommit,
		LogFormat: "text", LogLevel: "info",
		Transports: transport.Default,
	}
}

// Version is this binary's version (cmdutil.CurrentVersion of the build
// info and the -ldflags values).
func (f *Factory) Version() cmdutil.VersionInfo {
	return cmdutil.CurrentVersion(f.BuildVersion, f.BuildCommit)
}

// Logger builds the slog logger the log flags ask for; logs go to stderr,
// redacted. Repeated Errors are rate-limited with a count of what was
// suppressed. A flag value it does not know is a usage error (exit 2).
func (f *Factory) Logger() (*slog.Logger, error) {
	return f.LoggerTo(f.IOStreams.ErrOut)
}

// LoggerTo is Logger writing to w instead of stderr (dlq triage's
// --log-file, or nowhere while its screen is up).
func (f *Factory) LoggerTo(w io.Writer) (*slog.Logger, error) {
	h, _, err := f.logHandler(w)
	if err != nil {
		return nil, err
	}
	return slog.New(redact.Handler(observe.RateLimit(h, observe.DefaultLogEvery, observe.DefaultLogBurst), f.IOStreams.Redactor)), nil
}

// LogHandler returns the handler the log flags ask for, writing to
// stderr, and its level; consume wraps it (observe.LogTee) before
// rate-limiting.
func (f *Factory) LogHandler() (slog.Handler, slog.Level, error) {
	return f.logHandler(f.IOStreams.ErrOut)
}

// logHandler is LogHandler writing to w.
func (f *Factory) logHandler(w io.Writer) (slog.Handler, slog.Level, error) {
	var level slog.Level
	switch strings.ToLower(f.LogLevel) {
	case "debug":
		level = slog.LevelDebug
	case "info", "":
		level = slog.LevelInfo
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return nil, 0, cmdutil.UsageErr(fmt.Errorf("--log-level %q: valid values are %s", redact.Quoted(f.LogLevel), strings.Join(cmdutil.LogLevels, ", ")))
	}
	opts := &slog.HandlerOptions{Level: level}
	switch f.LogFormat {
	case "text", "":
		return slog.NewTextHandler(w, opts), level, nil
	case "json":
		return slog.NewJSONHandler(w, opts), level, nil
	}
	return nil, 0, cmdutil.UsageErr(fmt.Errorf("--log-format %q: valid values are %s", redact.Quoted(f.LogFormat), strings.Join(cmdutil.LogFormats, ", ")))
}

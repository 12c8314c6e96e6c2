package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/execfile"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
)

// Exit codes of an exec handler's command (sysexits.h).
const (
	// ExitTempFail (EX_TEMPFAIL) asks for a Defer.
	ExitTempFail = 75
	// ExitDataErr (EX_DATAERR) marks the message Unacceptable.
	ExitDataErr = 65
)

// Environment variables the exec handler sets from the message header.
const (
	EnvMessageID     = "BRIGHTER_MESSAGE_ID"
	EnvTopic         = "BRIGHTER_TOPIC"
	EnvMessageType   = "BRIGHTER_MESSAGE_TYPE"
	EnvHandledCount  = "BRIGHTER_HANDLED_COUNT"
	EnvCorrelationID = "BRIGHTER_CORRELATION_ID"
	EnvContentType   = "BRIGHTER_CONTENT_TYPE"
	EnvPartitionKey  = "BRIGHTER_PARTITION_KEY"
	EnvTimestamp     = "BRIGHTER_TIMESTAMP"
	EnvReplyTo       = "BRIGHTER_REPLY_TO"
	EnvBag           = "BRIGHTER_BAG"
	// EnvTraceParent, EnvTraceState and EnvBaggage are the names OTel
	// tooling reads W3C trace context from; set only when the message
	// carries a value.
	EnvTraceParent = "TRACEPARENT"
	EnvTraceState  = "TRACESTATE"
	EnvBaggage     = "BAGGAGE"
)

// Defaults and bounds of the exec handler.
const (
	// DefaultTimeout is the exec and http handlers' timeout when none is
	// configured.
	DefaultTimeout = 30 * time.Second
	// DefaultWaitDelay is how long the exec handler waits, after the command
	// exited or was killed, for its output pipes to close.
	DefaultWaitDelay = 2 * time.Second
	// DefaultKillGrace is how long the exec handler waits, after SIGTERM to
	// the handler's process group, before it sends SIGKILL.
	DefaultKillGrace = 2 * time.Second
	// killWait bounds the wait for a SIGKILLed process group to be gone.
	killWait = time.Second
	// MaxCapture bounds the stdout and stderr kept of one run, per stream,
	// in bytes; the rest is discarded.
	MaxCapture = 64 << 10
	// MaxReason bounds a reason text taken from a handler's output, in bytes.
	MaxReason = 1024
)

// Stable log message texts of the exec handler.
const (
	msgExecOK           = "exec handler succeeded"
	msgExecDeferred     = "exec handler deferred the message"
	msgExecUnacceptable = "exec handler marked the message unacceptable"
	msgExecFailed       = "exec handler failed"
	// msgExecCutOff is logged at Info, not Error, when the run is killed
	// because the pump's stop cut the handler off: a planned stop is not a
	// failure (the pump logs its own Warning and releases the message).
	msgExecCutOff    = "exec handler cut off by the stop; run killed"
	msgExecBagEncode = "exec handler could not encode the message bag"
	// msgExecGroupEnded is logged at Info when the command left processes
	// in its group (a background child) and they were ended with it.
	msgExecGroupEnded = "exec handler's command left processes behind; its process group was ended"
)

// ExecOptions configures Exec.
type ExecOptions struct {
	// Command is the program to run: a name looked up in PATH, or a path.
	// It is resolved once, by Exec. It never runs through a shell.
	Command string
	// Args are the program's arguments, passed as given (no shell
	// interpretation, no expansion).
	Args []string
	// Env holds extra "NAME=value" entries added to the inherited
	// environment. The message's BRIGHTER_*, TRACEPARENT, TRACESTATE and
	// BAGGAGE variables are set after them and win; inherited values of
	// those names are removed, so they always describe the message.
	Env []string
	// Timeout bounds one run; 0 or less means DefaultTimeout. On timeout the
	// whole process group is ended (SIGTERM, then SIGKILL after KillGrace)
	// and the message deferred.
	Timeout time.Duration
	// KillGrace is how long a process of the run's group has to exit after
	// SIGTERM before the whole group is sent SIGKILL, whatever sent the
	// SIGTERM (the command's exit, its timeout, the pump's stop); 0 or less
	// means DefaultKillGrace.
	KillGrace time.Duration
	// WaitDelay bounds how long the handler waits for output pipes after the
	// command exited or was killed; 0 or less means DefaultWaitDelay.
	WaitDelay time.Duration
	// Logger receives the command's output and failures; nil discards them.
	Logger *slog.Logger
	// Groups, when not nil, records the process group of each run while
	// it is under way, so that the command can end every group still
	// running before it exits (Groups.End).
	Groups *Groups
	// Redactor is the run's: its secrets (every secret of the
	// subscriptions file, the AWS keys of the environment) are masked in
	// the handler's errors, logs and reasons as well as the handler's own.
	// nil means the handler's own secrets only.
	Redactor *redact.Redactor
}

// Exec returns a handler that runs opts.Command once per message, with
// opts.Args as given (never through a shell), the body on stdin, and the
// header in the environment (see the Env* constants; BRIGHTER_HANDLED_COUNT
// is the presented delivery count, R-1; BRIGHTER_BAG is the bag as a JSON
// object). The exit code selects the outcome: 0 Ack; 75 (EX_TEMPFAIL) Defer;
// 65 (EX_DATAERR) Unacceptable, with the last line of stderr as the reason
// (the rejectionMessage, R-18); any other exit, a failure to start, a
// timeout or a cancelled ctx Defer with Result.Err set. The command runs in
// a process group of its own, which ends with the run: when the
// command exits, times out or is cut off by the pump's stop, every process
// left in its group (a background `cmd &`) is sent SIGTERM, then SIGKILL
// after KillGrace, before the handler returns, so nothing a run started
// outlives its message's settle or consume. stdout and stderr are captured
// (MaxCapture bytes each) into the log with the message id.
//
// A program may print its environment or arguments: the values of
// opts.Env, the values of the inherited redact.SecretEnv variables (the
// AWS keys) and every secret of opts.Redactor are masked in every
// reason, error and log line the handler writes, so the text that
// reaches the rejection message, /events and the logs holds none of them.
//
// Exec returns an error when Command is empty or cannot be started: not
// found, not an executable file, or a script whose #! line names an
// interpreter that cannot be started (execfile.Look; with
// #!/usr/bin/env NAME, NAME is looked up on the PATH the command runs
// with, opts.Env's when it sets one).
func Exec(opts ExecOptions) (pump.Handler, error) {
	if opts.Command == "" {
		return nil, errors.New("exec handler: no command given")
	}
	path, err := execfile.Look(opts.Command, envPath(opts.Env))
	if err != nil {
		return nil, fmt.Errorf("exec handler: command %q cannot be run: %w", opts.Command, err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.WaitDelay <= 0 {
		opts.WaitDelay = DefaultWaitDelay
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	for _, kv := range opts.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("exec handler: environment entry %q is not NAME=value", kv)
		}
	}
	base := append(inheritedEnv(), opts.Env...)
	red := &redact.Redactor{}
	for _, kv := range opts.Env {
		_, v, _ := strings.Cut(kv, "=")
		red.Add(v)
	}
	for _, kv := range base {
		if k, v, _ := strings.Cut(kv, "="); slices.Contains(redact.SecretEnv, k) {
			red.Add(v)
		}
	}
	red.Include(opts.Redactor)
	e := &execHandler{
		opts: opts,
		path: path,
		args: append([]string(nil), opts.Args...),
		base: base,
		red:  red,
		log:  orDiscard(opts.Logger),
	}
	return Redacted(e.run, e.red), nil
}

type execHandler struct {
	opts ExecOptions
	path string
	args []string
	base []string
	red  *redact.Redactor
	log  *slog.Logger
}

// run runs the command for m. Every text it logs passes e.red.
func (e *execHandler) run(ctx context.Context, m *message.Message) pump.Result {
	runCtx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()

	var stdout, stderr capture
	cmd := exec.CommandContext(runCtx, e.path, e.args...)
	cmd.Stdin = bytes.NewReader(m.Body)
	menv, cleanup, err := spillLargeEnv(e.messageEnv(ctx, m))
	defer cleanup()
	outputDone := func() {}
	if err == nil {
		outputDone, err = captureOutput(cmd, &stdout, &stderr, e.opts.WaitDelay)
	}
	if err != nil {
		e.log.LogAttrs(ctx, slog.LevelError, msgExecFailed, slog.String("message_id", m.Header.MessageID),
			slog.String("command", e.opts.Command), slog.String("error", e.red.String(err.Error())))
		return pump.Result{Outcome: pump.Defer, Err: err}
	}
	cmd.Env = append(append(make([]string, 0, len(e.base)+16), e.base...), menv...)
	cmd.WaitDelay = e.opts.WaitDelay
	group := killGroup(cmd, e.opts.KillGrace)

	start := time.Now()
	runErr := runWithParentDeath(cmd, func() { e.opts.Groups.add(group) })
	n := endGroup(group)
	e.opts.Groups.remove(group)
	if n > 0 {
		e.log.LogAttrs(ctx, slog.LevelInfo, msgExecGroupEnded, slog.String("message_id", m.Header.MessageID),
			slog.String("command", e.opts.Command), slog.Bool("killed", n > 1))
	}
	// After the group was ended, its processes' ends of the pipes are
	// closed: the output is whole.
	outputDone()
	elapsed := time.Since(start)

	attrs := []slog.Attr{
		slog.String("message_id", m.Header.MessageID),
		slog.String("command", e.opts.Command),
		slog.Duration("elapsed", elapsed),
	}
	fail := func(err error) pump.Result {
		level, msg := slog.LevelError, msgExecFailed
		if ctx.Err() != nil {
			level, msg = slog.LevelInfo, msgExecCutOff
		}
		e.log.LogAttrs(ctx, level, msg, append(attrs,
			slog.String("error", e.red.String(err.Error())),
			slog.String("stderr", e.red.String(stderr.String())),
			slog.String("stdout", e.red.String(stdout.String())))...)
		return pump.Result{Outcome: pump.Defer, Err: err}
	}

	// A timeout or a cancellation wins over whatever exit the kill caused.
	if cerr := runCtx.Err(); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) && ctx.Err() == nil {
			return fail(fmt.Errorf("exec handler: %s: timed out after %s", e.opts.Command, e.opts.Timeout))
		}
		return fail(fmt.Errorf("exec handler: %s: cancelled: %w", e.opts.Command, context.Cause(ctx)))
	}
	if cmd.ProcessState == nil {
		return fail(fmt.Errorf("exec handler: %s: could not start: %w", e.opts.Command, runErr))
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.Is(runErr, exec.ErrWaitDelay) && !errors.As(runErr, &exitErr) {
		// The process ran but waiting for it or copying its I/O failed.
		return fail(fmt.Errorf("exec handler: %s: %w", e.opts.Command, runErr))
	}

	code := cmd.ProcessState.ExitCode()
	attrs = append(attrs, slog.Int("exit_code", code))
	switch code {
	case 0:
		e.log.LogAttrs(ctx, slog.LevelDebug, msgExecOK, append(attrs, slog.String("stdout", e.red.String(stdout.String())))...)
		return pump.Result{Outcome: pump.Ack}
	case ExitTempFail:
		e.log.LogAttrs(ctx, slog.LevelWarn, msgExecDeferred, append(attrs, slog.String("stderr", e.red.String(stderr.String())))...)
		return pump.Result{Outcome: pump.Defer, Reason: lastLine(stderr.Bytes(), "exit status 75 (EX_TEMPFAIL)")}
	case ExitDataErr:
		reason := lastLine(stderr.Bytes(), "exit status 65 (EX_DATAERR)")
		e.log.LogAttrs(ctx, slog.LevelWarn, msgExecUnacceptable, append(attrs,
			slog.String("reason", e.red.String(reason)), slog.String("stderr", e.red.String(stderr.String())))...)
		return pump.Result{Outcome: pump.Unacceptable, Reason: reason}
	case -1:
		return fail(fmt.Errorf("exec handler: %s: %s", e.opts.Command, cmd.ProcessState))
	}
	return fail(fmt.Errorf("exec handler: %s: exit status %d: %s", e.opts.Command, code, lastLine(stderr.Bytes(), "no stderr")))
}

// envPath is the PATH entry of env ("NAME=value" entries), or "" when env
// sets none (the command inherits the process's).
func envPath(env []string) string {
	p := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			p = v
		}
	}
	return p
}

// messageEnv returns the environment entries that describe m.
func (e *execHandler) messageEnv(ctx context.Context, m *message.Message) []string {
	h := &m.Header
	ts := ""
	if !h.Timestamp.IsZero() {
		ts = message.FormatWireTime(h.Timestamp)
	}
	env := []string{
		envEntry(EnvMessageID, h.MessageID),
		envEntry(EnvTopic, h.Topic),
		envEntry(EnvMessageType, h.MessageType.String()),
		envEntry(EnvHandledCount, strconv.Itoa(h.HandledCount)),
		envEntry(EnvCorrelationID, h.CorrelationID),
		envEntry(EnvContentType, h.ContentType),
		envEntry(EnvPartitionKey, h.PartitionKey),
		envEntry(EnvTimestamp, ts),
		envEntry(EnvReplyTo, h.ReplyTo),
		envEntry(EnvBag, e.bagJSON(ctx, m)),
	}
	for _, kv := range [...][2]string{{EnvTraceParent, h.TraceParent}, {EnvTraceState, h.TraceState}, {EnvBaggage, h.Baggage}} {
		if kv[1] != "" {
			env = append(env, envEntry(kv[0], kv[1]))
		}
	}
	return env
}

// MaxEnvValue is the longest message value (bytes) put in an exec
// handler's environment as it is. Linux refuses to start a process with
// any one environment string over 128 KiB ("argument list too long"), so a
// longer value (a large bag, a hostile header) is written to a file
// instead: NAME is set empty and NAME_FILE names the file, which is removed
// when the run ends.
const MaxEnvValue = 64 * 1024

// spillLargeEnv returns env with every value longer than MaxEnvValue moved
// to a temporary file (see MaxEnvValue), and a cleanup that removes those
// files. It returns an error when a file cannot be written.
func spillLargeEnv(env []string) ([]string, func(), error) {
	var files []string
	cleanup := func() {
		for _, f := range files {
			_ = os.Remove(f)
		}
	}
	out := env[:0:0]
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if len(val) <= MaxEnvValue {
			out = append(out, kv)
			continue
		}
		f, err := os.CreateTemp("", "brighter-"+strings.ToLower(name)+"-*")
		if err != nil {
			return nil, cleanup, fmt.Errorf("exec handler: %s is %d bytes, too long for the environment, and its file could not be made: %w", name, len(val), err)
		}
		files = append(files, f.Name())
		_, werr := f.WriteString(val)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, cleanup, fmt.Errorf("exec handler: write %s to %s: %w", name, f.Name(), werr)
		}
		out = append(out, name+"=", name+"_FILE="+f.Name())
	}
	return out, cleanup, nil
}

// bagJSON returns the bag as a JSON object ("{}" when empty or when it
// cannot be encoded, which is logged).
func (e *execHandler) bagJSON(ctx context.Context, m *message.Message) string {
	if len(m.Header.Bag) == 0 {
		return "{}"
	}
	b, err := json.Marshal(m.Header.Bag)
	if err != nil {
		e.log.LogAttrs(ctx, slog.LevelWarn, msgExecBagEncode,
			slog.String("message_id", m.Header.MessageID), slog.String("error", err.Error()))
		return "{}"
	}
	return string(b)
}

// envEntry makes "name=value", dropping NUL bytes (which no environment can
// hold) so that a header value can never stop the command from starting.
func envEntry(name, value string) string {
	return name + "=" + strings.ReplaceAll(value, "\x00", "")
}

// inheritedEnv returns this process's environment without the variables the
// exec handler sets from a message.
func inheritedEnv() []string {
	env := os.Environ()
	out := env[:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "BRIGHTER_"), name == EnvTraceParent, name == EnvTraceState, name == EnvBaggage:
			continue
		}
		out = append(out, kv)
	}
	return out
}

// lastLine returns the last non-blank line of b, trimmed and bounded to
// MaxReason bytes of valid UTF-8, or def when there is none.
func lastLine(b []byte, def string) string {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = bytes.TrimSpace(b[i+1:])
	}
	if len(b) == 0 {
		return def
	}
	return preview(b, MaxReason)
}

// captureOutput gives cmd pipes of its own for stdout and stderr and copies
// them into stdout and stderr, so that cmd.Wait returns when the command
// exits, not when every process that inherited the pipes has closed them
// (a background child would hold the message for WaitDelay). It returns
// done, which waits up to waitDelay for the copies to reach the pipes' end
// (every writer gone: call it after the group was ended) and then closes
// the read ends; the copies have ended when it returns.
func captureOutput(cmd *exec.Cmd, stdout, stderr *capture, waitDelay time.Duration) (done func(), err error) {
	var readers, writers []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			_ = f.Close()
		}
	}
	for range 2 {
		r, w, perr := os.Pipe()
		if perr != nil {
			closeAll(readers)
			closeAll(writers)
			return func() {}, fmt.Errorf("exec handler: output pipe: %w", perr)
		}
		readers, writers = append(readers, r), append(writers, w)
	}
	cmd.Stdout, cmd.Stderr = writers[0], writers[1]
	copied := make(chan struct{}, 2)
	for i, dst := range []*capture{stdout, stderr} {
		go func() {
			_, _ = io.Copy(dst, readers[i])
			copied <- struct{}{}
		}()
	}
	return func() {
		// The child has its own copies of the write ends from Start on.
		closeAll(writers)
		t := time.NewTimer(waitDelay)
		defer t.Stop()
		n := 0
		for n < 2 {
			select {
			case <-copied:
				n++
			case <-t.C:
				// A process outside the group (it made a session of its
				// own) still holds a pipe: stop reading.
				closeAll(readers)
				for ; n < 2; n++ {
					<-copied
				}
			}
		}
		closeAll(readers)
	}, nil
}

// capture is an io.Writer that keeps the first MaxCapture bytes written to
// it and discards the rest, never failing the writer.
type capture struct {
	buf       bytes.Buffer
	truncated bool
}

func (c *capture) Write(p []byte) (int, error) {
	room := MaxCapture - c.buf.Len()
	if room < len(p) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

// Bytes returns what was kept.
func (c *capture) Bytes() []byte { return c.buf.Bytes() }

// String returns what was kept as valid UTF-8, marked when output was cut.
func (c *capture) String() string {
	s := strings.ToValidUTF8(c.buf.String(), "\uFFFD")
	if c.truncated {
		s += "…[truncated]"
	}
	return s
}

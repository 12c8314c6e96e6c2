package handler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// Names of the builtin handlers, as a subscription's handler block spells
// them.
const (
	// BuiltinLog logs the message at Info and acknowledges it.
	BuiltinLog = "log"
	// BuiltinAck acknowledges every message.
	BuiltinAck = "ack"
	// BuiltinDefer defers every message (the budget drill: R-4).
	BuiltinDefer = "defer"
	// BuiltinReject rejects every message with DeliveryError and
	// RejectReason as its rejectionMessage.
	BuiltinReject = "reject"
	// BuiltinFail defers every message with a handler failure (Result.Err).
	BuiltinFail = "fail"
	// BuiltinUnacceptable rejects every message as Unacceptable.
	BuiltinUnacceptable = "unacceptable"
)

// Reason texts of the builtin handlers: they become the rejectionMessage of
// a routed copy.
const (
	// RejectReason is the reason the reject builtin gives.
	RejectReason = "rejected by the builtin reject handler"
	// UnacceptableReason is the reason the unacceptable builtin gives.
	UnacceptableReason = "marked unacceptable by the builtin unacceptable handler"
)

// ErrBuiltinFailure is the Result.Err of the fail builtin: a simulated
// handler failure.
var ErrBuiltinFailure = errors.New("builtin fail handler: simulated handler failure")

// Stable log message texts of the builtin handlers.
const (
	msgBuiltinLog = "message received"
)

// bodyPreviewBytes bounds the body preview the log builtin writes.
const bodyPreviewBytes = 256

// builtinNames lists the valid builtin names, in the order error messages
// show them.
var builtinNames = []string{BuiltinLog, BuiltinAck, BuiltinDefer, BuiltinReject, BuiltinFail, BuiltinUnacceptable}

// BuiltinNames returns the names Builtin accepts, for help texts and config
// validation.
func BuiltinNames() []string { return append([]string(nil), builtinNames...) }

// fixed returns the Result of a builtin that does not log, and whether the
// name is one.
func fixed(name string) (pump.Result, bool) {
	switch name {
	case BuiltinAck:
		return pump.Result{Outcome: pump.Ack}, true
	case BuiltinDefer:
		return pump.Result{Outcome: pump.Defer}, true
	case BuiltinReject:
		return pump.Result{Outcome: pump.Reject, Reason: RejectReason}, true
	case BuiltinFail:
		return pump.Result{Outcome: pump.Defer, Err: ErrBuiltinFailure}, true
	case BuiltinUnacceptable:
		return pump.Result{Outcome: pump.Unacceptable, Reason: UnacceptableReason}, true
	}
	return pump.Result{}, false
}

// Builtin returns the builtin handler called name: log, ack, defer, reject,
// fail or unacceptable (see the Builtin* constants). logger receives the log
// builtin's lines; nil discards them. An unknown name is an error that lists
// the valid ones.
func Builtin(name string, logger *slog.Logger) (pump.Handler, error) {
	if name == BuiltinLog {
		logger = orDiscard(logger)
		return func(ctx context.Context, m *message.Message) pump.Result {
			logger.LogAttrs(ctx, slog.LevelInfo, msgBuiltinLog,
				slog.String("message_id", m.Header.MessageID),
				slog.String("topic", m.Header.Topic),
				slog.Int("delivery_count", m.Header.HandledCount),
				slog.String("body", preview(m.Body, bodyPreviewBytes)),
			)
			return pump.Result{Outcome: pump.Ack}
		}, nil
	}
	r, ok := fixed(name)
	if !ok {
		return nil, fmt.Errorf("unknown builtin handler %q: valid names are %s", name, strings.Join(builtinNames, ", "))
	}
	return func(context.Context, *message.Message) pump.Result { return r }, nil
}

// Script returns a handler that answers from a comma-separated list of
// outcomes such as "defer,defer,ack": a delivery presenting count n gets
// item min(n, len-1), so the last item repeats. Items are the builtin names
// (log, ack, defer, reject, fail, unacceptable), with spaces around them
// ignored; a log item acks without logging (ScriptItems takes a logger). The
// handler keeps no state: the presented delivery count selects
// the item, so a script behaves the same across restarts and replicas. An
// empty spec or an unknown item is an error that lists the valid items.
func Script(spec string) (pump.Handler, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("empty handler script: give a comma-separated list of %s", strings.Join(builtinNames, ", "))
	}
	return ScriptItems(strings.Split(spec, ","), nil)
}

// ScriptItems is Script over a list of items already split, such as
// config.Handler.Script; log items log to logger (nil discards). An empty
// list or an unknown item is an error that lists the valid items.
func ScriptItems(items []string, logger *slog.Logger) (pump.Handler, error) {
	if len(items) == 0 {
		return nil, fmt.Errorf("empty handler script: give a list of %s", strings.Join(builtinNames, ", "))
	}
	steps := make([]pump.Handler, len(items))
	for i, it := range items {
		it = strings.TrimSpace(it)
		h, err := Builtin(it, logger)
		if err != nil {
			return nil, fmt.Errorf("handler script %q: item %d %q is not an outcome: valid items are %s", strings.Join(items, ","), i+1, it, strings.Join(builtinNames, ", "))
		}
		steps[i] = h
	}
	return func(ctx context.Context, m *message.Message) pump.Result {
		return steps[min(max(m.Header.HandledCount, 0), len(steps)-1)](ctx, m)
	}, nil
}

// preview returns at most n bytes of b as valid UTF-8 text, ending with
// message.TruncationMarker (counted in n) when it was cut.
func preview(b []byte, n int) string {
	return message.TruncateBytes(string(b), n)
}

// orDiscard returns l, or a logger that discards everything when l is nil.
func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

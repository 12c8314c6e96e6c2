package triage

import (
	"context"
	"io"
	"log/slog"
	osuser "os/user"
	"strings"

	"github.com/brightergo/brighter/internal/tui/triage"
)

// The audit record of each action, written to --log-file.

// LogAudit is the stable message of the audit record dlq triage writes to
// --log-file for each action, whatever the log level: user, action
// (replay, archive, purge, edit, restore), ids, destination, dry_run, done, failed,
// outcome (the action's summary) and error.
const LogAudit = "dlq triage action"

// auditLogger is the logger of the audit records: w in the log format,
// at Info whatever --log-level says (an audit line is never filtered out).
func (o *Options) auditLogger(w io.Writer) *slog.Logger {
	user := o.Env("USER")
	if u, err := osuser.Current(); err == nil && u.Username != "" {
		user = u.Username
	}
	var h slog.Handler = slog.NewTextHandler(w, nil)
	if o.Factory != nil && o.Factory.LogFormat == "json" {
		h = slog.NewJSONHandler(w, nil)
	}
	return slog.New(h).With("user", user)
}

// record writes the audit record of one action (nothing without
// --log-file).
func (a *triageActions) record(ctx context.Context, action string, ids []string, dest string, dryRun bool, res triage.Result, err error) {
	if a.audit == nil {
		return
	}
	attrs := []any{"source", a.t.URL, "action", action, "ids", strings.Join(ids, ","), "destination", dest, "dry_run", dryRun,
		"done", res.Done, "failed", res.Failed, "outcome", res.Summary}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	a.audit.InfoContext(ctx, LogAudit, attrs...)
}

package triage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// The console's edits (e, E): dlq edit's session on the body or on the
// headers and bag, the edited copy replayed through the console's
// allow-list to every stored copy of the id, refused (nothing sent) as dlq
// edit refuses when one edit does not fit them all.

// Edit implements triage.Actions: dlq edit's session on the body.
func (a *triageActions) Edit(ctx context.Context, m *message.Message) (triage.Editing, error) {
	return a.startEdit(ctx, m, false)
}

// EditHeaders implements triage.HeaderEditor: dlq edit --headers' session
// (the headers and bag as YAML, checked as --set checks them), the edited
// copy replayed through the console's allow-list.
func (a *triageActions) EditHeaders(ctx context.Context, m *message.Message) (triage.Editing, error) {
	return a.startEdit(ctx, m, true)
}

// startEdit reads the stored copies of m's id, refuses copies one edit
// cannot be applied to, and starts the session.
func (a *triageActions) startEdit(ctx context.Context, m *message.Message, headers bool) (triage.Editing, error) {
	n, err := a.editCopies(ctx, m.Header.MessageID, headers)
	if err != nil {
		return nil, err
	}
	s, err := shared.NewEditSession(m, headers, !headers)
	if err != nil {
		return nil, err
	}
	return &triageEdit{a: a, s: s, headers: headers, copies: n, editor: a.o.Editor(), dest: a.ReplayDestinations([]*message.Message{m})[0]}, nil
}

// errCopiesDiffer is the refusal of an edit of an id whose stored copies
// one edit does not fit.
var errCopiesDiffer = errors.New("one edit cannot be applied to them all; nothing was edited or sent (dlq edit --topic or --since/--until edits one apart)")

// editCopies reads every stored copy of id in the destination (each
// released as the scan ends) and returns how many there are, or an error
// wrapping errCopiesDiffer when their bodies differ or, for a header edit
// (headers), their editable headers differ, naming what differs.
func (a *triageActions) editCopies(ctx context.Context, id string, headers bool) (int, error) {
	src, _, closeSrc, err := a.Open(ctx, false)
	if err != nil {
		return 0, err
	}
	var ms []*message.Message
	_, serr := inspect.Scan(ctx, src, inspect.Filter{IDs: []string{id}}, func(_ context.Context, m *message.Message) (bool, error) {
		ms = append(ms, m.Clone())
		return false, nil
	})
	if err := errors.Join(serr, closeSrc()); err != nil {
		return 0, fmt.Errorf("read the stored copies of %s: %w", redact.Quoted(id), err)
	}
	what, keys := inspect.EditCopiesDiffer(ms, headers)
	if what == "" {
		return len(ms), nil
	}
	what += " differ"
	for i, k := range keys {
		keys[i] = redact.Quote(k)
	}
	if len(keys) > 0 {
		what += " (" + strings.Join(keys, ", ") + ")"
	}
	return len(ms), fmt.Errorf("message %s has %d stored copies whose %s: %w", redact.Quoted(id), len(ms), what, errCopiesDiffer)
}

// triageEdit is one edit of the console.
type triageEdit struct {
	a       *triageActions
	s       *shared.EditSession
	headers bool
	copies  int
	editor  string
	dest    string
}

func (e *triageEdit) Command() *exec.Cmd  { return e.s.Commands(e.editor)[0] }
func (e *triageEdit) Destination() string { return e.dest }
func (e *triageEdit) Close()              { e.s.Close() }

// Copies implements triage.Editing: the stored copies read as the edit
// started (at least 1: the message opened).
func (e *triageEdit) Copies() int { return max(e.copies, 1) }

// Edited implements triage.Editing: the edited body, or the edited
// headers and bag as JSON.
func (e *triageEdit) Edited() string {
	ed, err := e.s.Result(e.body(), nil, e.a.o.Now())
	if err != nil {
		return ""
	}
	if e.headers && ed.Headers != nil {
		b, err := json.Marshal(ed.Headers)
		if err != nil {
			return ""
		}
		return string(b)
	}
	return string(ed.Body)
}

// body is the body result takes: nil when the body is edited (its file is
// read), the original's for a header edit.
func (e *triageEdit) body() []byte {
	if e.s.BodyPath != "" {
		return nil
	}
	return e.s.Orig.Body
}

// Check implements triage.Editing: the edited files read back and
// validated as Finish would, nothing sent.
func (e *triageEdit) Check() error {
	_, err := e.s.Result(e.body(), nil, e.a.o.Now())
	return err
}

// Finish validates the edited body and replays the edited copy to each
// stored copy of the id, as dlq edit does: a copy whose body (or, for a
// header edit, headers) is not the one edited, stored since the edit
// started, is not sent (inspect.ErrChanged: failed, it stays).
func (e *triageEdit) Finish(ctx context.Context, dryRun bool) (triage.Result, error) {
	defer e.a.acting()()
	ed, err := e.s.Result(e.body(), nil, e.a.o.Now())
	if err != nil {
		return triage.Result{}, fmt.Errorf("%w; nothing was sent", err)
	}
	ids := []string{e.s.Orig.Header.MessageID}
	res, err := e.a.replay(ctx, ids, dryRun, ed.Transform, func(triage.Outcome) {})
	res.Summary = "edit: " + res.Summary
	e.a.record(ctx, "edit", ids, e.dest, dryRun, res, err)
	return res, err
}

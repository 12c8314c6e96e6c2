package triage

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// The console's edits (e, E): dlq edit's session on the body or on the
// headers and bag, the edited copy replayed through the console's allow-list.

// Edit implements triage.Actions: dlq edit's session on the body.
func (a *triageActions) Edit(m *message.Message) (triage.Editing, error) {
	s, err := shared.NewEditSession(m, false, true)
	if err != nil {
		return nil, err
	}
	return &triageEdit{a: a, s: s, editor: a.o.Editor(), dest: a.ReplayDestinations([]*message.Message{m})[0]}, nil
}

// triageEdit is one edit of the console.
type triageEdit struct {
	a      *triageActions
	s      *shared.EditSession
	editor string
	dest   string
}

func (e *triageEdit) Command() *exec.Cmd  { return e.s.Commands(e.editor)[0] }
func (e *triageEdit) Destination() string { return e.dest }
func (e *triageEdit) Close()              { e.s.Close() }

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

// Finish validates the edited body and replays the edited copy.
func (e *triageEdit) Finish(ctx context.Context, dryRun bool) (triage.Result, error) {
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

// EditHeaders implements triage.HeaderEditor: dlq edit --headers' session
// (the headers and bag as YAML, checked as --set checks them), the edited
// copy replayed through the console's allow-list.
func (a *triageActions) EditHeaders(m *message.Message) (triage.Editing, error) {
	s, err := shared.NewEditSession(m, true, false)
	if err != nil {
		return nil, err
	}
	return &triageEdit{a: a, s: s, editor: a.o.Editor(), dest: a.ReplayDestinations([]*message.Message{m})[0]}, nil
}

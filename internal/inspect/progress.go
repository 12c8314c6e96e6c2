package inspect

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// Bar is the Progress of a replay on a terminal: a progress bar
// (schollz/progressbar) on w with the count of replayed and failed
// messages. Failures are also printed above the bar.
type Bar struct {
	// Refusal is what a refused message's line says after its
	// destination; "" says it is not a destination the subscriptions
	// file knows (refusedNotKnown).
	Refusal string
	bar     *progressbar.ProgressBar
	w       io.Writer
	failed  int
}

// refusedNotKnown is why the allow-list refuses a message, as the
// progress says it unless told otherwise (Bar.Refusal, Lines.Refusal).
const refusedNotKnown = "not a destination the subscriptions file knows"

// refusalOr is why, or refusedNotKnown when why is "".
func refusalOr(why string) string {
	if why == "" {
		return refusedNotKnown
	}
	return why
}

// NewBar draws a bar of total steps (-1 when unknown: a spinner) on w.
func NewBar(w io.Writer, total int, description string) *Bar {
	b := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("msg"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	return &Bar{bar: b, w: w}
}

// Done advances the bar by one.
func (b *Bar) Done(o Outcome) {
	o = o.visible()
	if o.Left {
		_ = b.bar.Clear()
		fmt.Fprintf(b.w, "left %s: %s\n", o.ID, leftText)
	} else if o.Refused {
		_ = b.bar.Clear()
		fmt.Fprintf(b.w, "refused %s -> %s: %s\n", o.ID, shownDestination(o.Destination), refusalOr(b.Refusal))
	} else if o.Err != nil {
		b.failed++
		_ = b.bar.Clear()
		fmt.Fprintf(b.w, "failed %s: %v\n", o.ID, o.Err)
	}
	_ = b.bar.Add(1)
}

// Finish removes the bar.
func (b *Bar) Finish() { _ = b.bar.Finish() }

// Lines is the Progress of a replay off a terminal: one plain line per
// selected message on w ("replayed ID -> DEST", "would replay ...",
// "refused ID -> DEST: ...", "would refuse ...", "failed ID: error"), easy
// to grep and to log.
type Lines struct {
	// Refusal is what a refused message's line says after its
	// destination; "" says it is not a destination the subscriptions
	// file knows.
	Refusal string
	w       io.Writer
}

// NewLines writes progress lines to w.
func NewLines(w io.Writer) *Lines { return &Lines{w: w} }

// Done writes the message's line.
func (l *Lines) Done(o Outcome) {
	o = o.visible()
	switch {
	case o.Left:
		fmt.Fprintf(l.w, "left %s: %s\n", o.ID, leftText)
	case o.Refused && o.DryRun:
		fmt.Fprintf(l.w, "would refuse %s -> %s: %s\n", o.ID, shownDestination(o.Destination), refusalOr(l.Refusal))
	case o.Refused:
		fmt.Fprintf(l.w, "refused %s -> %s: %s\n", o.ID, shownDestination(o.Destination), refusalOr(l.Refusal))
	case o.Err != nil:
		fmt.Fprintf(l.w, "failed %s: %v\n", o.ID, o.Err)
	case o.DryRun && o.Duplicate:
		fmt.Fprintf(l.w, "would remove %s: another copy of a failure replayed -> %s\n", o.ID, shownDestination(o.Destination))
	case o.DryRun:
		fmt.Fprintf(l.w, "would replay %s -> %s\n", o.ID, shownDestination(o.Destination))
	case o.Duplicate:
		fmt.Fprintf(l.w, "replayed %s -> %s (another copy of the same failure; removed, not sent again)\n", o.ID, shownDestination(o.Destination))
	case o.Resumed:
		fmt.Fprintf(l.w, "replayed %s -> %s (sent by an earlier run; removed now)\n", o.ID, shownDestination(o.Destination))
	case o.NewID != o.ID:
		fmt.Fprintf(l.w, "replayed %s -> %s as %s\n", o.ID, shownDestination(o.Destination), o.NewID)
	default:
		fmt.Fprintf(l.w, "replayed %s -> %s\n", o.ID, shownDestination(o.Destination))
	}
}

// leftText is what the progress line of a message left by a replay
// (Outcome.Left) says of it.
const leftText = "dead-lettered again while this replay ran; it stays in the dead-letter destination (replay again to retry it)"

// WriteSummary writes the replay's last line: "replayed N, skipped N,
// failed N" (with "would replay" on a dry run), ", refused N" when the
// allow-list refused any and ", left N" when any were dead-lettered again
// while the replay ran.
func WriteSummary(w io.Writer, s Summary) error {
	verb := "replayed"
	if s.DryRun {
		verb = "would replay"
	}
	refused := ""
	if s.Refused > 0 {
		refused = fmt.Sprintf(", refused %d", s.Refused)
	}
	if s.Left > 0 {
		refused += fmt.Sprintf(", left %d", s.Left)
	}
	if _, err := fmt.Fprintf(w, "%s %d, skipped %d, failed %d%s\n", verb, s.Replayed, s.Skipped, s.Failed, refused); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// ReplayRecord is one line of `dlq replay -o json`: a message's
// outcome (Type "message") or the replay's summary (Type "summary", last).
type ReplayRecord struct {
	// Type is "message" or "summary".
	Type string `json:"type"`
	// ID is the message's id in the dead-letter destination (message).
	ID string `json:"id,omitempty"`
	// NewID is the id it was published with when --new-id changed it.
	NewID string `json:"newId,omitempty"`
	// Destination is where it was (or would be) published (message).
	Destination string `json:"destination,omitempty"`
	// Outcome is "replayed", "would-replay" (a dry run), "refused" or
	// "would-refuse" (the allow-list), "failed" or "left" (dead-lettered
	// again while the replay ran; it stays) (message); RunJSON's are
	// "archived", "purged", "restored", "would-restore" (restore's dry
	// run) and "failed".
	Outcome string `json:"outcome,omitempty"`
	// Error is why it failed or was refused (message, Outcome "failed",
	// "refused" or "would-refuse").
	Error string `json:"error,omitempty"`
	// Resumed is true when an earlier, interrupted run had published the
	// copy and this run only removed the message (the replay journal).
	Resumed bool `json:"resumed,omitempty"`
	// Duplicate is true when the run had already handled another stored
	// copy of the same failure: this one was removed, not published again.
	Duplicate bool `json:"duplicate,omitempty"`
	// Archived, Purged and Restored are the summary counts of archive,
	// purge and restore (RunJSON).
	Archived *int `json:"archived,omitempty"`
	Purged   *int `json:"purged,omitempty"`
	Restored *int `json:"restored,omitempty"`
	// Replayed, Skipped, Failed, Refused, Left and DryRun are Summary's
	// (summary); Skipped, Failed and DryRun are also RunJSON's.
	Replayed *int `json:"replayed,omitempty"`
	Skipped  *int `json:"skipped,omitempty"`
	Failed   *int `json:"failed,omitempty"`
	Refused  *int `json:"refused,omitempty"`
	Left     *int `json:"left,omitempty"`
	// AlreadyThere is restore's dry run: on a message record, how many
	// copies of its id the dead-letter destination already holds (absent
	// when none); on the summary, how many selected ids it already holds.
	AlreadyThere *int  `json:"alreadyThere,omitempty"`
	DryRun       *bool `json:"dryRun,omitempty"`
	// Interrupted is true on the summary of a replay stopped by a signal.
	Interrupted *bool `json:"interrupted,omitempty"`
}

// ReplayJSON is the Progress of `dlq replay -o json`: one ReplayRecord per
// selected message on w, as it is handled, and the summary last
// (WriteSummary), for scripts (jq) and log shippers. Write errors are kept
// and returned by WriteSummary.
type ReplayJSON struct {
	// Refusal, when not "", is a refused message's error ("refused: "
	// and it) in place of ErrRefused's text.
	Refusal string
	enc     *export.Lines
	err     error
}

// NewReplayJSON writes JSON-lines replay records to w.
func NewReplayJSON(w io.Writer) *ReplayJSON { return &ReplayJSON{enc: export.NewLines(w)} }

// Done writes the message's record.
func (j *ReplayJSON) Done(o Outcome) {
	r := ReplayRecord{Type: "message", ID: o.ID, Destination: o.Destination, Outcome: "replayed", Resumed: o.Resumed, Duplicate: o.Duplicate}
	if o.NewID != o.ID {
		r.NewID = o.NewID
	}
	refused := ErrRefused.Error()
	if j.Refusal != "" {
		refused = "refused: " + j.Refusal
	}
	switch {
	case o.Left:
		r.Outcome, r.Error = "left", leftText
	case o.Refused && o.DryRun:
		r.Outcome, r.Error = "would-refuse", refused
	case o.Refused:
		r.Outcome, r.Error = "refused", refused
	case o.Err != nil:
		r.Outcome, r.Error = "failed", o.Err.Error()
	case o.DryRun:
		r.Outcome = "would-replay"
	}
	if err := j.enc.Encode(r); err != nil && j.err == nil {
		j.err = fmt.Errorf("write replay record: %w", err)
	}
}

// WriteSummary writes the summary record (interrupted: the replay was
// stopped by a signal) and returns the first write error of the run.
func (j *ReplayJSON) WriteSummary(s Summary, interrupted bool) error {
	r := ReplayRecord{Type: "summary", Replayed: &s.Replayed, Skipped: &s.Skipped, Failed: &s.Failed, Refused: &s.Refused, Left: &s.Left, DryRun: &s.DryRun, Interrupted: &interrupted}
	if err := j.enc.Encode(r); err != nil && j.err == nil {
		j.err = fmt.Errorf("write replay summary: %w", err)
	}
	return j.err
}

// RunJSON writes the JSON lines of `dlq archive`, `purge` and `restore -o
// json`: ReplayRecords of Type "message" (Outcome "archived",
// "purged", "restored", "would-restore" or "failed") and a last "summary"; write errors are kept and
// returned by Summary.
type RunJSON struct {
	enc *export.Lines
	err error
}

// NewRunJSON writes JSON-lines run records to w.
func NewRunJSON(w io.Writer) *RunJSON { return &RunJSON{enc: export.NewLines(w)} }

// Message writes a message's record: outcome when err is nil, else
// "failed" with the error.
func (j *RunJSON) Message(id, destination, outcome string, err error) {
	r := ReplayRecord{Type: "message", ID: id, Destination: destination, Outcome: outcome}
	if err != nil {
		r.Outcome, r.Error = "failed", err.Error()
	}
	j.write(r)
}

// Record writes the message record r (its Type is set).
func (j *RunJSON) Record(r ReplayRecord) {
	r.Type = "message"
	j.write(r)
}

// Summary writes the summary record r (its Type is set) and returns the
// first write error of the run.
func (j *RunJSON) Summary(r ReplayRecord) error {
	r.Type = "summary"
	j.write(r)
	return j.err
}

func (j *RunJSON) write(r ReplayRecord) {
	if err := j.enc.Encode(r); err != nil && j.err == nil {
		j.err = fmt.Errorf("write %s record: %w", r.Type, err)
	}
}

// shownDestination is a replay destination as the progress lines show it:
// a destination is message content (a forged originalTopic may carry
// credentials in a URL's user-info or query), so it passes the URL rule
// (redact.URL) and is cut at redact.MaxQuoted bytes.
func shownDestination(dest string) string { return redact.Cut(redact.URL(dest)) }

// visible is o as a progress line shows it: its ids, destination and
// error through kit.Visible, so that a message's id or topic never reaches
// the terminal as a control sequence (docs/security.md).
func (o Outcome) visible() Outcome {
	o.ID, o.NewID, o.Destination = kit.Visible(o.ID), kit.Visible(o.NewID), kit.Visible(o.Destination)
	if o.Err != nil {
		if s := o.Err.Error(); kit.Visible(s) != s {
			o.Err = errors.New(kit.Visible(s))
		}
	}
	return o
}

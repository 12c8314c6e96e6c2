package inspect

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/brightergo/brighter/internal/redact"
)

// Bar is the Progress of a replay on a terminal: a progress bar
// (schollz/progressbar) on w with the count of replayed and failed
// messages. Failures are also printed above the bar.
type Bar struct {
	bar    *progressbar.ProgressBar
	w      io.Writer
	failed int
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
	if o.Refused {
		_ = b.bar.Clear()
		fmt.Fprintf(b.w, "refused %s -> %s: not a destination the subscriptions file knows\n", o.ID, redact.Cut(o.Destination))
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
	w io.Writer
}

// NewLines writes progress lines to w.
func NewLines(w io.Writer) *Lines { return &Lines{w: w} }

// Done writes the message's line.
func (l *Lines) Done(o Outcome) {
	switch {
	case o.Refused && o.DryRun:
		fmt.Fprintf(l.w, "would refuse %s -> %s: not a destination the subscriptions file knows\n", o.ID, redact.Cut(o.Destination))
	case o.Refused:
		fmt.Fprintf(l.w, "refused %s -> %s: not a destination the subscriptions file knows\n", o.ID, redact.Cut(o.Destination))
	case o.Err != nil:
		fmt.Fprintf(l.w, "failed %s: %v\n", o.ID, o.Err)
	case o.DryRun:
		fmt.Fprintf(l.w, "would replay %s -> %s\n", o.ID, o.Destination)
	case o.NewID != o.ID:
		fmt.Fprintf(l.w, "replayed %s -> %s as %s\n", o.ID, o.Destination, o.NewID)
	default:
		fmt.Fprintf(l.w, "replayed %s -> %s\n", o.ID, o.Destination)
	}
}

// WriteSummary writes the replay's last line: "replayed N, skipped N,
// failed N" (with "would replay" on a dry run), and ", refused N" when the
// allow-list refused any.
func WriteSummary(w io.Writer, s Summary) error {
	verb := "replayed"
	if s.DryRun {
		verb = "would replay"
	}
	refused := ""
	if s.Refused > 0 {
		refused = fmt.Sprintf(", refused %d", s.Refused)
	}
	if _, err := fmt.Fprintf(w, "%s %d, skipped %d, failed %d%s\n", verb, s.Replayed, s.Skipped, s.Failed, refused); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

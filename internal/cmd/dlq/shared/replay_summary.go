package shared

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

func (o *ReplayOptions) finish(bar *inspect.Bar, sum inspect.Summary, rerr, cerr error, t *transport.Target) error {
	if bar != nil {
		bar.Finish()
	}
	if err := o.writeSummary(sum, false); err != nil {
		return cmdutil.FailureErr(err)
	}
	switch {
	case rerr != nil:
		return cmdutil.FailureErr(Naming(t, "replay", rerr))
	case cerr != nil:
		return cmdutil.FailureErr(fmt.Errorf("replay %s: %w", t.URL, cerr))
	case sum.Refused > 0 && sum.Failed == 0:
		where := "they are"
		if sum.Refused == 1 {
			where = "it is"
		}
		if o.noFile {
			return cmdutil.FailureErr(fmt.Errorf("replay %s: %s refused: %s; %s still in the dead-letter destination",
				t.URL, Plural(sum.Refused, "message"), noFileRefusal, where))
		}
		return cmdutil.FailureErr(fmt.Errorf("replay %s: %s refused: the originalTopic is not a destination the subscriptions file knows for it; %s still in the dead-letter destination (give --to, or --allow-any-destination)",
			t.URL, Plural(sum.Refused, "message"), where))
	case sum.Failed > 0:
		where := "they are"
		if sum.Failed == 1 {
			where = "it is"
		}
		return cmdutil.FailureErr(fmt.Errorf("replay %s: %s failed; %s still in the dead-letter destination (or in both places, as logged)", t.URL, Plural(sum.Failed, "message"), where))
	case sum.Left > 0:
		// The destination was not emptied: what this run replayed (or
		// another failure of an id it handled) was dead-lettered again
		// while it ran. Not a clean end.
		where := "they are"
		if sum.Left == 1 {
			where = "it is"
		}
		return cmdutil.FailureErr(fmt.Errorf("replay %s: %s dead-lettered again while the replay ran; %s still in the dead-letter destination (replay again to retry)", t.URL, Plural(sum.Left, "message"), where))
	case o.EditID != "" && o.EditFound > 1 && sum.Replayed < o.EditFound:
		// dlq edit read more stored copies than its replay reached: the
		// others were taken (or are held) by another reader meanwhile.
		// Said, never silent.
		return cmdutil.FailureErr(fmt.Errorf("edit %s: %s of message %s were read for the edit but not reached by its replay (taken or held by another reader meanwhile); dlq peek lists what is still in %s",
			t.URL, Plural(o.EditFound-sum.Replayed, "stored copy"), redact.Quoted(o.EditID), t.URL))
	}
	return nil
}

// writeSummary writes the replay's last line: a summary record with
// --output json (interrupted: stopped by a signal), else "replayed N,
// skipped N, failed N".
func (o *ReplayOptions) writeSummary(sum inspect.Summary, interrupted bool) error {
	if o.EditID != "" {
		// dlq edit: the messages the scan read before it found the one it
		// edits are not the user's business.
		sum.Skipped = 0
	}
	if o.EditID != "" && o.Format != export.JSON {
		if _, err := fmt.Fprintf(o.Out(), "edit %s: %s\n", redact.Quoted(o.EditID), editOutcome(sum, interrupted, o.EditFound)); err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
		return nil
	}
	if o.Format == export.JSON {
		if o.json == nil { // nothing was selected: no message records
			o.json = inspect.NewReplayJSON(o.Out())
		}
		return o.json.WriteSummary(sum, interrupted)
	}
	return inspect.WriteSummary(o.Out(), sum)
}

// editOutcome is what became of dlq edit's message (found stored copies
// of it were read for the edit): the words of its summary line.
func editOutcome(sum inspect.Summary, interrupted bool, found int) string {
	if found > 1 || sum.Replayed+sum.Failed+sum.Refused+sum.Left > 1 {
		return copiesOutcome(sum, interrupted, found)
	}
	switch {
	case sum.Replayed > 0 && sum.DryRun:
		return "found; would be replayed (dry run, nothing changed)"
	case sum.Failed > 0 && sum.DryRun:
		return "found; the replay would fail (see the log; dry run, nothing changed)"
	case sum.Replayed > 0:
		return "found and replayed"
	case sum.Refused > 0:
		return "found; refused, still in the dead-letter destination"
	case sum.Failed > 0:
		return "found; failed, still in the dead-letter destination (see the log)"
	case interrupted:
		return "interrupted before it was replayed; still in the dead-letter destination"
	}
	return "not found (not replayed)"
}

// copiesOutcome is editOutcome for an id stored more than once: how many
// copies were found and what became of each.
func copiesOutcome(sum inspect.Summary, interrupted bool, found int) string {
	verb := "replayed"
	if sum.DryRun {
		verb = "would replay"
	}
	line := fmt.Sprintf("found %s; %s %d", Plural(found, "stored copy"), verb, sum.Replayed)
	if sum.Failed > 0 {
		line += fmt.Sprintf(", failed %d", sum.Failed)
	}
	if sum.Refused > 0 {
		line += fmt.Sprintf(", refused %d", sum.Refused)
	}
	if sum.Left > 0 {
		line += fmt.Sprintf(", left %d (dead-lettered again while the edit ran)", sum.Left)
	}
	if missed := found - sum.Replayed - sum.Failed - sum.Refused; missed > 0 && !interrupted {
		line += fmt.Sprintf(", not reached %d", missed)
	}
	switch {
	case sum.DryRun:
		line += " (dry run, nothing changed)"
	case interrupted:
		line += "; interrupted, the others are still in the dead-letter destination"
	case sum.Failed+sum.Refused+sum.Left > 0:
		line += "; failed, refused and left copies are still in the dead-letter destination"
	}
	return line
}

// confirm asks on a terminal; off one it refuses without --yes. An
// interrupt (ctx done: SIGINT or SIGTERM) while it waits for the answer
// ends the wait at once: (false, nil), and the caller exits 130.
func (o *ReplayOptions) confirm(ctx context.Context, n int, name string, dests []string) (bool, error) {
	to := destinationsText(dests)
	if !o.IO.InTTY {
		return false, cmdutil.UsageErr(fmt.Errorf("%s selected in %s, more than --confirm-over %d, to be replayed %s: pass --yes to replay them, or narrow the selection", Plural(n, "message"), name, o.ConfirmOver, to))
	}
	fmt.Fprintf(o.IO.ErrOut, "Replay %s from %s %s? [y/N] ", Plural(n, "message"), name, to)
	type answer struct {
		line string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(o.IO.In).ReadString('\n')
		answered <- answer{line, err}
	}()
	var line string
	select {
	case <-ctx.Done():
		fmt.Fprintln(o.IO.ErrOut)
		return false, nil
	case a := <-answered:
		if a.err != nil && !errors.Is(a.err, io.EOF) {
			return false, cmdutil.FailureErr(fmt.Errorf("read confirmation: %w", a.err))
		}
		line = a.line
	}
	if ctx.Err() != nil {
		fmt.Fprintln(o.IO.ErrOut)
		return false, nil
	}
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(o.IO.ErrOut)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	// Declined (or no answer: end of input): a refused replay, exit 2 as
	// without --yes off a terminal; nothing was replayed.
	return false, cmdutil.UsageErr(errors.New("replay cancelled; nothing was replayed"))
}

// destinationsText names where a replay's copies go, for its
// confirmation: "to D", "to D1, D2 and D3", at most five named ("and N
// more" after them).
func destinationsText(dests []string) string {
	const shown = 5
	switch {
	case len(dests) == 0:
		return "to their originalTopic"
	case len(dests) == 1:
		return "to " + dests[0]
	case len(dests) <= shown:
		return "to " + strings.Join(dests[:len(dests)-1], ", ") + " and " + dests[len(dests)-1]
	}
	return fmt.Sprintf("to %s and %d more", strings.Join(dests[:shown], ", "), len(dests)-shown)
}

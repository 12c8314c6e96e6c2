package stats

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
)

// Options are dlq stats's flags: the shared ones only.
type Options struct {
	*shared.Options
}

// NewCmdStats returns dlq stats. runF, when not nil, is called with the
// parsed options instead of runStats (a test checks the flags' parsing
// without reading anything).
func NewCmdStats(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{Options: shared.NewOptions(f)}
	return o.ScanCmd(&cobra.Command{
		Use:   "stats [SUBSCRIPTION|URL]",
		Short: "Count dead-lettered messages by reason, original topic and rejection message",
		Long: `Summarise a dead-letter destination: how many messages, the oldest and
newest rejection, and counts grouped by rejection reason, original topic and
rejection message (normalised, so ids and numbers do not split groups).
A group with a note (n in dlq triage, kept in the state directory) shows
it in a NOTE column, and in the group's "note" field with -o json.
Nothing is removed.`,
		Example: `  brighter dlq stats orders --config brighter.yaml
  brighter dlq stats -c brighter.yaml -s orders -o json
  brighter dlq stats sqs://orders-dlq --output json`,
	}, func(cmd *cobra.Command) error {
		if runF != nil {
			return runF(o)
		}
		return runStats(cmd.Context(), o)
	})
}

// runStats scans o.Dest and prints its summary.
func runStats(ctx context.Context, o *Options) error { return o.Scan(ctx, o.stats) }

// stats counts what rs selects and prints the summary as a table or JSON;
// an interrupted scan prints the counts of what it read so far.
func (o *Options) stats(rs *shared.ReadScan) error {
	st, counts, err := inspect.Collect(rs.Ctx, rs.Source, rs.F)
	stopped := rs.Ctx.Err() != nil
	if err != nil && !stopped {
		return cmdutil.FailureErr(shared.Naming(rs.T, "stats", err))
	}
	if n := o.GroupNotes(); n != nil {
		// The console's notes (n in dlq triage) on this destination's
		// groups; a notes file that cannot be read costs the notes only.
		notes, nerr := n.Read(rs.T.URL)
		if nerr != nil {
			fmt.Fprintf(rs.ErrOut, "%s: group notes not shown: %v\n", rs.T.URL, nerr)
		}
		st.SetNotes(notes)
	}
	if o.Output == export.JSON {
		err = st.WriteJSON(o.Out())
	} else {
		err = st.WriteTable(o.Out(), o.IO.OutTTY && o.IO.Color, o.Now())
	}
	if stopped {
		rs.Summarise("interrupted after %s; the counts cover only those", shared.Plural(st.Total, "message"))
		return shared.Interrupted("stats " + rs.T.URL)
	}
	if err != nil {
		return cmdutil.FailureErr(err)
	}
	// As peek says how many it showed of how many it read: a filter that
	// selects nothing must not look like an empty destination.
	rs.Summarise("%d counted, %d read", counts.Selected, counts.Scanned)
	shared.NoteHeld(rs.ErrOut, rs.T, rs.Ch)
	return nil
}

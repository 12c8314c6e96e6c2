package stats

import (
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
)

// dlq stats: its texts and its scan.

func newDLQStatsCmd(o *dlqOptions) *cobra.Command {
	return o.newScanCmd(&cobra.Command{
		Use:   "stats [SUBSCRIPTION|URL]",
		Short: "Count dead-lettered messages by reason, original topic and rejection message",
		Long: `Summarise a dead-letter destination: how many messages, the oldest and
newest rejection, and counts grouped by rejection reason, original topic and
rejection message (normalised, so ids and numbers do not split groups).
Nothing is removed.`,
		Example: `  brighter dlq stats orders --config brighter.yaml
  brighter dlq stats -c brighter.yaml -s orders -o json
  brighter dlq stats sqs://orders-dlq --output json`,
	}, o.stats)
}

// stats counts what rs selects and prints the summary as a table or JSON;
// an interrupted scan prints the counts of what it read so far.
func (o *dlqOptions) stats(rs *readScan) error {
	st, counts, err := inspect.Collect(rs.ctx, rs.source, rs.f)
	stopped := rs.ctx.Err() != nil
	if err != nil && !stopped {
		return cmdutil.FailureErr(naming(rs.t, "stats", err))
	}
	if o.output == export.JSON {
		err = st.WriteJSON(o.io.Out)
	} else {
		err = st.WriteTable(o.io.Out, o.io.OutTTY && o.io.Color, o.now())
	}
	if stopped {
		rs.summarise("interrupted after %s; the counts cover only those", plural(st.Total, "message"))
		return interrupted("stats " + rs.t.URL)
	}
	if err != nil {
		return cmdutil.FailureErr(err)
	}
	// As peek says how many it showed of how many it read: a filter that
	// selects nothing must not look like an empty destination.
	rs.summarise("%d counted, %d read", counts.Selected, counts.Scanned)
	noteHeld(rs.errOut, rs.t, rs.ch)
	return nil
}

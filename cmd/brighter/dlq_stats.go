package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/inspect"
)

// dlq stats: its flags and its run.

func newDLQStatsCmd(o *dlqOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats [SUBSCRIPTION|URL]",
		Short: "Count dead-lettered messages by reason, original topic and rejection message",
		Long: `Summarise a dead-letter destination: how many messages, the oldest and
newest rejection, and counts grouped by rejection reason, original topic and
rejection message (normalised, so ids and numbers do not split groups).
Nothing is removed.`,
		Example: `  brighter dlq stats orders --config brighter.yaml
  brighter dlq stats -c brighter.yaml -s orders -o json
  brighter dlq stats sqs://orders-dlq --output json`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.runWith(func(cmd *cobra.Command, dest string) error { return o.runStats(cmd.Context(), dest) }),
	}
	o.addCommon(cmd)
	o.addOutput(cmd)
	return cmd
}

func (o *dlqOptions) runStats(ctx context.Context, arg string) error {
	rs, err := o.openReadScan(ctx, arg)
	if err != nil {
		return err
	}
	defer rs.done()
	ctx, t, logger, f, ch := rs.ctx, rs.t, rs.logger, rs.f, rs.ch
	st, counts, err := inspect.Collect(ctx, o.source(t, ch, logger), f)
	stopped := ctx.Err() != nil
	if err != nil && !stopped {
		return failureErr(naming(t, "stats", err))
	}
	// An interrupted run prints the counts of what it read so far.
	if o.output == "json" {
		err = st.WriteJSON(o.io.Out)
	} else {
		err = st.WriteTable(o.io.Out, o.io.OutTTY && o.io.Color, o.now())
	}
	if stopped {
		fmt.Fprintf(o.io.ErrOut, "%s: interrupted after %s; the counts cover only those\n", t.url, plural(st.Total, "message"))
		return interrupted("stats " + t.url)
	}
	if err != nil {
		return failureErr(err)
	}
	// As peek says how many it showed of how many it read: a filter that
	// selects nothing must not look like an empty destination.
	fmt.Fprintf(o.io.ErrOut, "%s: %d counted, %d read\n", t.url, counts.Selected, counts.Scanned)
	return nil
}

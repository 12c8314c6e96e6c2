package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/inspect"
)

// dlq peek: its flags and its run.

func newDLQPeekCmd(o *dlqOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "peek [SUBSCRIPTION|URL]",
		Short: "Show dead-lettered messages with their rejection metadata, removing nothing",
		Long: `Show the messages of a dead-letter destination: id, original topic,
rejection reason and message, when it was rejected, its handled count, type
and age. A message without rejection metadata was moved by the broker's own
redrive and is shown as such.

--output json prints one JSON object per line with every header, the bag and
the body (base64 when it is not UTF-8): the format a memory.seed file takes.
Output is streamed: memory stays flat however many messages there are.`,
		Example: `  # Why were the orders subscription's messages dead-lettered?
  brighter dlq peek orders --config brighter.yaml
  brighter dlq peek -c brighter.yaml -s orders

  # Only budget exhaustions of the last hour, as JSON lines
  brighter dlq peek orders --reason DeliveryError --since 1h --output json

  # A queue by URL, with the AWS environment's credentials
  brighter dlq peek sqs://orders-dlq --grep 'timeout' --limit 20`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.runWith(func(cmd *cobra.Command, dest string) error { return o.runPeek(cmd.Context(), dest) }),
	}
	o.addCommon(cmd)
	o.addOutput(cmd)
	return cmd
}

func (o *dlqOptions) runPeek(ctx context.Context, arg string) error {
	rs, err := o.openReadScan(ctx, arg)
	if err != nil {
		return err
	}
	defer rs.done()
	ctx, t, logger, f, ch := rs.ctx, rs.t, rs.logger, rs.f, rs.ch
	var out inspect.Exporter
	if o.output == "json" {
		out = inspect.NewJSONLines(o.io.Out)
	} else {
		out = inspect.NewTable(o.io.Out, o.io.OutTTY && o.io.Color, o.now)
	}
	counts, err := inspect.Peek(ctx, o.source(t, ch, logger), f, out)
	if ctx.Err() != nil {
		fmt.Fprintf(o.io.ErrOut, "%s: %d shown, %d read (interrupted)\n", t.url, counts.Selected, counts.Scanned)
		return interrupted("peek " + t.url)
	}
	if err != nil {
		return failureErr(naming(t, "peek", err))
	}
	fmt.Fprintf(o.io.ErrOut, "%s: %d shown, %d read\n", t.url, counts.Selected, counts.Scanned)
	return nil
}

package peek

import (
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
)

// dlq peek: its texts and its scan.

func newDLQPeekCmd(o *dlqOptions) *cobra.Command {
	return o.newScanCmd(&cobra.Command{
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
	}, o.peek)
}

// peek streams the messages rs selects as a table or JSON lines, then
// says on stderr how many it showed of how many it read.
func (o *dlqOptions) peek(rs *readScan) error {
	var out inspect.Exporter
	if o.output == export.JSON {
		out = inspect.NewJSONLines(o.io.Out)
	} else {
		out = inspect.NewTable(o.io.Out, o.io.OutTTY && o.io.Color, o.now)
	}
	counts, err := inspect.Peek(rs.ctx, rs.source, rs.f, out)
	if rs.ctx.Err() != nil {
		rs.summarise("%d shown, %d read (interrupted)", counts.Selected, counts.Scanned)
		return interrupted("peek " + rs.t.URL)
	}
	if err != nil {
		return cmdutil.FailureErr(naming(rs.t, "peek", err))
	}
	rs.summarise("%d shown, %d read", counts.Selected, counts.Scanned)
	noteHeld(rs.errOut, rs.t, rs.ch)
	return nil
}

package peek

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
)

// Options are dlq peek's flags: the shared ones only.
type Options struct {
	*shared.Options
}

// NewCmdPeek returns dlq peek. runF, when not nil, is called with the
// parsed options instead of runPeek (a test checks the flags' parsing
// without reading anything).
func NewCmdPeek(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{Options: shared.NewOptions(f)}
	return o.ScanCmd(&cobra.Command{
		Use:   "peek [SUBSCRIPTION|URL]",
		Short: "Show dead-lettered messages with their rejection metadata, removing nothing",
		Long: `Show the messages of a dead-letter destination: id, original topic,
rejection reason and message, when it was rejected, its handled count, type
and age. A message without rejection metadata read from a broker's redrive
target (a subscription's --native destination, or its dead-letter
destination when that is the same channel; a RocketMQ %DLQ% topic) was
moved by that redrive and is shown as "moved by broker redrive"; read from
any other destination (a source queue, a queue given by URL) it is shown as
"no rejection metadata", which is all that is known of it. Both follow
"NativeRedrive: ", the reason stats and --reason use. Its original topic,
when it names none but the destination read, is shown as where it came
from when that is known (the one subscription redriving here, or on SQS
the one queue ListDeadLetterSourceQueues names), else "-".

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
	}, func(cmd *cobra.Command) error {
		if runF != nil {
			return runF(o)
		}
		return runPeek(cmd.Context(), o)
	})
}

// runPeek scans o.Dest and prints what it selects.
func runPeek(ctx context.Context, o *Options) error { return o.Scan(ctx, o.peek) }

// peek streams the messages rs selects as a table or JSON lines, then
// says on stderr how many it showed of how many it read.
func (o *Options) peek(rs *shared.ReadScan) error {
	var out inspect.Exporter
	if o.Output == export.JSON {
		out = inspect.NewJSONLines(o.Out())
	} else {
		tb := inspect.NewTable(o.Out(), o.IO.OutTTY && o.IO.Color, o.Now)
		if !o.RedriveTarget(rs.T) {
			tb.NotRedriveTarget()
		}
		tb.RedriveFrom(shared.ReplaySelf(rs.T), func() string { return o.RedriveSource(rs.Ctx, rs.T, rs.DT, rs.Logger) })
		out = tb
	}
	counts, err := inspect.Peek(rs.Ctx, rs.Source, rs.F, out)
	if rs.Ctx.Err() != nil || o.StdoutGone() {
		// A signal, or stdout's reader went away (| head): what the scan
		// held is released either way.
		rs.Summarise("%d shown, %d read (interrupted)", counts.Selected, counts.Scanned)
		return shared.Interrupted("peek " + rs.T.URL)
	}
	if err != nil {
		return cmdutil.FailureErr(shared.Naming(rs.T, "peek", err))
	}
	rs.Summarise("%d shown, %d read", counts.Selected, counts.Scanned)
	shared.NoteHeld(rs.ErrOut, rs.T, rs.Ch)
	return nil
}

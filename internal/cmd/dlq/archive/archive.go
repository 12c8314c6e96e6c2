package archive

import (
	"context"

	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/spf13/cobra"
)

// Options are dlq archive's flags (shared.ArchiveOptions).
type Options struct {
	*shared.ArchiveOptions
}

// NewCmdArchive returns dlq archive. runF, when not nil, is called with the
// parsed options instead of runArchive (a test checks the flags' parsing
// without reading anything).
func NewCmdArchive(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{ArchiveOptions: &shared.ArchiveOptions{Options: shared.NewOptions(f)}}
	cmd := &cobra.Command{
		Use:   "archive [SUBSCRIPTION|URL]",
		Short: "Move dead-lettered messages into a JSON-lines file, removing each once it is on disk",
		Long: `Write the selected messages to --file (default: stdout) as JSON lines, the
shape peek --output json prints and restore reads (every header, the bag
with the rejection metadata, and the body, base64 when it is not UTF-8),
and remove each from the dead-letter destination only after its line has
been written and the file fsynced. A crash at any instant leaves every
message in the destination, in the file, or in both, never in neither.

The file is appended to (created with mode 0600 when missing), so an
archive run again after a crash, or on another day, adds to it. An
existing file must be an archive: every complete line a record restore
can read, else it is refused (exit 2) and left unchanged; only an
unfinished last line starting with '{' after complete records (a killed
archive's) is cut off before appending. Archive
removes what it selects, so it needs a filter (--reason, --topic, --since,
--until, --id, --grep, --group-id, --limit) or --all; it refuses to write
to a terminal. --file must be a regular file, existing or new (a symbolic
link to one is followed): a device such as /dev/null, a pipe, a socket, a
directory or an empty path is refused (exit 2) before anything is read.
Failures to remove are counted and exit 1: those messages
are in both places.`,
		Example: `  # Keep a failure group's messages on disk and out of the queue
  brighter dlq archive orders --group-id 921f815d2f4c --file orders-timeouts.jsonl

  # Everything, to stdout, compressed
  brighter dlq archive sqs://orders-dlq --all | gzip > dlq-$(date +%F).jsonl.gz`,
		Args: shared.DestinationArgs,
		RunE: o.RunWith(func(cmd *cobra.Command) error {
			if runF != nil {
				return runF(o)
			}
			return runArchive(cmd.Context(), o)
		}),
	}
	o.AddCommon(cmd)
	cmd.Flags().StringVar(&o.File, "file", "-", "append the archive to this regular file, existing or new ('-': stdout)")
	cmd.Flags().BoolVar(&o.All, "all", false, "archive every message (without it a filter is required)")
	shared.AddRunOutput(cmd, &o.Format)
	return cmd
}

// runArchive archives what o selects from o.Dest (shared.ArchiveOptions.RunArchive).
func runArchive(ctx context.Context, o *Options) error { return o.RunArchive(ctx, o.Dest) }

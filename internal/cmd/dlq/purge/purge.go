package purge

import (
	"context"

	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/spf13/cobra"
)

// Options are dlq purge's flags (shared.ArchiveOptions; Purge is set).
type Options struct {
	*shared.ArchiveOptions
}

// NewCmdPurge returns dlq purge. runF, when not nil, is called with the
// parsed options instead of runPurge (a test checks the flags' parsing
// without reading anything).
func NewCmdPurge(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{ArchiveOptions: &shared.ArchiveOptions{Options: shared.NewOptions(f), Purge: true}}
	cmd := &cobra.Command{
		Use:   "purge [SUBSCRIPTION|URL]",
		Short: "Delete dead-lettered messages for good (an archive to nowhere)",
		Long: `Remove the selected messages from the dead-letter destination, keeping no
copy: dlq archive to /dev/null. It needs --yes and a filter (--reason,
--topic, --since, --until, --id, --grep, --group-id, --limit) or --all;
without them it refuses (exit 2) and reads nothing. Archive first when in
doubt.`,
		Example: `  brighter dlq purge orders --group-id 921f815d2f4c --yes
  brighter dlq purge sqs://orders-dlq --until 720h --yes`,
		Args: shared.DestinationArgs,
		RunE: o.RunWith(func(cmd *cobra.Command) error {
			if runF != nil {
				return runF(o)
			}
			return runPurge(cmd.Context(), o)
		}),
	}
	o.AddCommon(cmd)
	cmd.Flags().BoolVar(&o.All, "all", false, "purge every message (without it a filter is required)")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "confirm: delete the selected messages, keeping no copy")
	shared.AddRunOutput(cmd, &o.Format)
	return cmd
}

// runPurge purges what o selects from o.Dest (shared.ArchiveOptions.RunArchive).
func runPurge(ctx context.Context, o *Options) error { return o.RunArchive(ctx, o.Dest) }

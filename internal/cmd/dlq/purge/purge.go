package purge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)
func newDLQPurgeCmd(parent *dlqOptions) *cobra.Command {
	o := &dlqArchiveOptions{dlqOptions: parent, purge: true}
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
		Args: cobra.MaximumNArgs(1),
		RunE: o.runWith(func(cmd *cobra.Command, dest string) error { return o.run(cmd.Context(), dest) }),
	}
	o.addCommon(cmd)
	cmd.Flags().BoolVar(&o.all, "all", false, "purge every message (without it a filter is required)")
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "confirm: delete the selected messages, keeping no copy")
	addRunOutput(cmd, &o.format)
	return cmd
}

package root

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
)

// IOStreams is the streams type the tests build literally.
type IOStreams = iostreams.IOStreams

// run runs the command line args on io as main does, with no -ldflags
// version, and returns the exit code.
func run(ctx context.Context, io *IOStreams, args []string) int {
	return Run(ctx, factory.New(io, "", ""), args)
}

// newRootCmd is the root command on io.
func newRootCmd(io *IOStreams) *cobra.Command { return NewCmdRoot(factory.New(io, "", "")) }

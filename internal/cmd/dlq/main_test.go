package dlq_test

import (
	"context"
	"os"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/cmd/root"
	"github.com/spf13/cobra"
)

// TestMain lets testscript run this test binary as the `brighter` command
// (the crash, journal and terminal tests start it as a process).
func TestMain(m *testing.M) {
	cmdtest.Main(m, func() int { return run(context.Background(), iostreams.System(), os.Args[1:]) })
}

// IOStreams is the streams type the tests build literally.
type IOStreams = iostreams.IOStreams

// run runs the command line args on io as main does, with no -ldflags
// version, and returns the exit code.
func run(ctx context.Context, io *IOStreams, args []string) int {
	return root.Run(ctx, factory.New(io, "", ""), args)
}

// newRootCmd is the root command on io.
func newRootCmd(io *IOStreams) *cobra.Command { return root.NewCmdRoot(factory.New(io, "", "")) }

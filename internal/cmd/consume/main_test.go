package consume_test

import (
	"context"
	"os"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/cmd/root"
)

// TestMain lets testscript run this test binary as the `brighter` command
// (the soak, scale-out and stop tests start it as a process).
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

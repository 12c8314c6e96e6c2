// Package cmdmain is the TestMain and the in-process `brighter` of the
// command packages' tests: Main registers the test binary as the
// `brighter` command (root.Run on the process's streams), which the tests
// start as a process when cmdtest.SubprocessEnv says so (a plain build of
// ./cmd/brighter otherwise), Run runs a
// command line in process as main does, NewRootCmd builds the command
// tree. The tests that use it are external test packages (package
// <command>_test): it is built on the root command, which builds every
// command. It is for tests only.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/cmd/cmdtest, internal/cmd/factory, internal/cmd/iostreams, internal/cmd/root
package cmdmain

import (
	"context"
	"os"
	"testing"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/cmd/root"
)

// Main is a command test package's TestMain: cmdtest.Main with the root's
// entry point, so that testscript can run this test binary as the
// `brighter` command (cmdtest.SubprocessSelf); by default the tests that
// start `brighter` as a process run a plain build of ./cmd/brighter.
func Main(m *testing.M) {
	cmdtest.Main(m, func() int { return Run(context.Background(), iostreams.System(), os.Args[1:]) })
}

// Run runs the command line args (without the program name) on io as main
// does, with no -ldflags version, and returns the exit code.
func Run(ctx context.Context, io *iostreams.IOStreams, args []string) int {
	return root.Run(ctx, factory.New(io, "", ""), args)
}

// NewRootCmd is the root command, with every command under it, on io.
func NewRootCmd(io *iostreams.IOStreams) *cobra.Command {
	return root.NewCmdRoot(factory.New(io, "", ""))
}

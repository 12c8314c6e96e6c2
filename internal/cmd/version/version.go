// Package version is `brighter version`: the binary's version, commit,
// Go toolchain and platform, as text or JSON (-o json). The version itself
// is read by factory.Factory.Version (cmdutil.ReadVersion).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package version

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/export"
)

// Options are version's flags and dependencies.
type Options struct {
	IO *iostreams.IOStreams
	// Version returns what to print (factory.Factory.Version).
	Version func() cmdutil.VersionInfo
	// Output is -o/--output: text or json.
	Output string
}

// NewCmdVersion returns the version command. runF, when not nil, is
// called with the parsed options instead of runVersion (a test checks
// the flags' parsing without running the command).
func NewCmdVersion(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Version: f.Version, Output: export.Default}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print brighter's version, commit and Go version",
		Long: `Print the version of this binary: the release or module version, the commit
it was built from (and whether the checkout had uncommitted changes), and the
Go toolchain and platform.`,
		Example: `  brighter version
  brighter version -o json`,
		Args: cmdutil.NoArgs(""),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.ParseOutput(cmdutil.VersionFormats, &opts.Output); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runVersion(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output, cmdutil.VersionFormats, "")
	return cmd
}

// runVersion writes the version to stdout: one line, or a JSON document
// with -o json. A failed write is a runtime failure (exit 1).
func runVersion(_ context.Context, opts *Options) error {
	v := opts.Version()
	if opts.Output == export.JSON {
		if err := export.WriteJSON(opts.IO.Out, v); err != nil {
			return cmdutil.FailureErr(err)
		}
		return nil
	}
	if _, err := fmt.Fprintln(opts.IO.Out, v); err != nil {
		return cmdutil.FailureErr(err)
	}
	return nil
}

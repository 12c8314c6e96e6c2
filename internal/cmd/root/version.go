package root

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/export"
)

func newVersionCmd(f *factory.Factory) *cobra.Command {
	io := f.IOStreams
	output := export.Default
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print brighter's version, commit and Go version",
		Long: `Print the version of this binary: the release or module version, the commit
it was built from (and whether the checkout had uncommitted changes), and the
Go toolchain and platform.`,
		Example: `  brighter version
  brighter version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.ParseOutput(cmdutil.VersionFormats, &output); err != nil {
				return err
			}
			v := f.Version()
			if output == export.JSON {
				if err := export.WriteJSON(io.Out, v); err != nil {
					return cmdutil.FailureErr(err)
				}
				return nil
			}
			fmt.Fprintln(io.Out, v)
			return nil
		},
	}
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.VersionFormats, "")
	return cmd
}

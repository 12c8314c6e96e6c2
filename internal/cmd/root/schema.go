package root

import (
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
)

func newSchemaCmd(io *iostreams.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the subscriptions file, for editors",
		Long: `Print the JSON Schema (draft 2020-12) of the subscriptions file.

Editors that use yaml-language-server (VS Code's YAML extension, Neovim,
Helix, JetBrains) complete field names and values, and flag mistakes as you
type, when the file names the schema in its first line:

  # yaml-language-server: $schema=./brighter.schema.json

brighter consume and lint remain the authority: they also say where each
problem is (file:line:col) and suggest the closest valid name.`,
		Example: `  # Save the schema next to your subscriptions file
  brighter schema > brighter.schema.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := io.Out.Write(config.Schema()); err != nil {
				return cmdutil.FailureErr(err)
			}
			return nil
		},
	}
}

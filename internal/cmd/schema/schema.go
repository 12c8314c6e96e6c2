// Package schema is `brighter schema`: the JSON Schema of the
// subscriptions file (config.Schema) on stdout, for editors.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package schema

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
)

// Options are schema's dependencies (it has no flags).
type Options struct {
	IO *iostreams.IOStreams
}

// NewCmdSchema returns the schema command. runF, when not nil, is called
// with the options instead of runSchema.
func NewCmdSchema(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
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
		Args: cmdutil.NoArgs(""),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runSchema(cmd.Context(), opts)
		},
	}
}

// runSchema writes the schema to stdout; a failed write is a runtime
// failure (exit 1).
func runSchema(_ context.Context, opts *Options) error {
	if _, err := opts.IO.Out.Write(config.Schema()); err != nil {
		return cmdutil.FailureErr(err)
	}
	return nil
}

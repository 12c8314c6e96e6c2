package main

import (
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/export"
)

// The -o/--output formats of each command (internal/export knows them all).
var (
	// scanFormats are dlq peek's and stats': table is text's old name there.
	scanFormats = export.New(export.JSON).WithAlias(export.Table, export.Text)
	// runFormats are dlq replay's, archive's, purge's and restore's.
	runFormats = export.New(export.JSON)
	// versionFormats are version's.
	versionFormats = export.New(export.JSON)
)

// addOutputFlag declares cmd's -o/--output into format: the default text,
// the formats' help (then note, when not empty) and their completion.
func addOutputFlag(cmd *cobra.Command, format *string, formats export.Formats, note string) {
	usage := formats.Usage()
	if note != "" {
		usage += " " + note
	}
	cmd.Flags().StringVarP(format, "output", "o", export.Default, usage)
	completeValues(cmd, formats.Completions(), "output")
}

// parseOutput replaces *format by the format it names (any case, an alias
// resolved); an unknown value is a usage error naming the valid ones.
func parseOutput(formats export.Formats, format *string) error {
	f, err := formats.Parse(*format)
	if err != nil {
		return usageErr(err)
	}
	*format = f
	return nil
}

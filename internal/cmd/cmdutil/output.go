package cmdutil

import (
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/export"
)

// The -o/--output formats of each command (internal/export knows them all).
var (
	// ScanFormats are dlq peek's and stats': table is text's old name there.
	ScanFormats = export.New(export.JSON).WithAlias(export.Table, export.Text)
	// RunFormats are dlq replay's, archive's, purge's and restore's.
	RunFormats = export.New(export.JSON)
	// VersionFormats are version's.
	VersionFormats = export.New(export.JSON)
)

// AddOutputFlag declares cmd's -o/--output into format: the default text,
// the formats' help (then note, when not empty) and their completion.
func AddOutputFlag(cmd *cobra.Command, format *string, formats export.Formats, note string) {
	usage := formats.Usage()
	if note != "" {
		usage += " " + note
	}
	cmd.Flags().StringVarP(format, "output", "o", export.Default, usage)
	CompleteValues(cmd, formats.Completions(), "output")
}

// ParseOutput replaces *format by the format it names (any case, an alias
// resolved); an unknown value is a usage error naming the valid ones.
func ParseOutput(formats export.Formats, format *string) error {
	f, err := formats.Parse(*format)
	if err != nil {
		return UsageErr(err)
	}
	*format = f
	return nil
}

package main

// exportMutants break the one -o vocabulary of internal/export: a command
// with a default of its own, the table alias old scripts use, the value
// read in any case, and JSON documents written some other way.
var exportMutants = []mutant{
	{Name: "output-default-own", What: "dlq peek and stats declare their own -o again, defaulting to table",
		File: "internal/cmd/dlq/shared/options.go",
		Old:  "func (o *Options) AddOutput(cmd *cobra.Command) {\n\tcmdutil.AddOutputFlag(cmd, &o.Output, cmdutil.ScanFormats, \"\")\n}",
		New:  "func (o *Options) AddOutput(cmd *cobra.Command) {\n\tcmd.Flags().StringVarP(&o.Output, \"output\", \"o\", \"table\", \"output format: table, json\")\n}",
		Pkg:  "./internal/cmd/root", Run: "^TestOutputFlag_TextIsEveryCommandsDefault$"},
	{Name: "output-table-alias-dropped", What: "dlq peek and stats refuse -o table, which scripts written for the old default use",
		File: "internal/cmd/cmdutil/output.go",
		Old:  "ScanFormats = export.New(export.JSON).WithAlias(export.Table, export.Text)",
		New:  "ScanFormats = export.New(export.JSON)",
		Pkg:  "./internal/cmd/root", Run: "^TestScripts$/^output_formats$"},
	{Name: "output-case-sensitive", What: "-o reads its value case-sensitively (lint -o JSON, which worked, is refused)",
		File: "internal/export/export.go",
		Old:  "\t\tif strings.EqualFold(value, n) {",
		New:  "\t\tif value == n {",
		Pkg:  "./internal/export", Run: "^TestParse_NamesInAnyCaseAliasesAndOneErrorText$"},
	{Name: "export-json-compact", What: "JSON documents (version, dlq stats, lint json and sarif) are written compact instead of indented",
		File: "internal/export/export.go",
		Old:  "\tenc.SetIndent(\"\", \"  \")\n",
		New:  "",
		Pkg:  "./internal/export ./internal/lint", Run: "^(TestWriteJSON_IndentedDocumentHTMLCharactersAsThemselves|TestFormats_Golden)$"},
}

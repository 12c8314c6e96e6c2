package lint

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/brightergo/brighter/internal/export"
)

// Format is an output format of Write.
type Format string

// The output formats.
const (
	// FormatText is "file:line:col: severity id: message", grouped by file,
	// with a summary line; coloured when WriteOptions.Color is set.
	FormatText Format = export.Text
	// FormatJSON is one JSON object: files, findings, summary counts.
	FormatJSON Format = export.JSON
	// FormatSARIF is a SARIF 2.1.0 log that GitHub code scanning accepts.
	FormatSARIF Format = export.SARIF
	// FormatGitHub is GitHub Actions workflow commands (::warning file=...).
	FormatGitHub Format = export.GitHub
)

// OutputFormats are the values of lint's -o/--output, as internal/export
// declares every command's.
var OutputFormats = export.New(export.JSON, export.SARIF, export.GitHub)

// Formats lists the valid format names, in the order help text shows them.
var Formats = OutputFormats.Names()

// ParseFormat reads a format name in any case; the error is export's
// (--output "xml": valid values are text, json, sarif, github).
func ParseFormat(name string) (Format, error) {
	f, err := OutputFormats.Parse(name)
	return Format(f), err
}

// Report is what one lint run found.
type Report struct {
	// Files are the files linted, as named in findings, in argument order.
	Files []string
	// Findings are every finding, sorted (see Sort).
	Findings []Finding
	// Incomplete, when not empty, says why the lint did not complete (a
	// subscriptions or infrastructure file that could not be read):
	// Findings are only those of what was read, and no format writes a
	// summary that could pass for a clean result. Text writes
	// "lint did not complete: REASON" in place of its summary line, JSON
	// an "incomplete" member in place of "summary", SARIF an invocation
	// with executionSuccessful false, github an ::error annotation.
	Incomplete string
}

// incompleteLine is the text format's line, and the github annotation's
// message, for a report that did not complete.
func (r Report) incompleteLine() string {
	return "lint did not complete: " + r.Incomplete
}

// Counts returns how many findings have each severity.
func (r Report) Counts() (errors, warnings, notes int) {
	for _, f := range r.Findings {
		switch f.Severity {
		case SeverityError:
			errors++
		case SeverityWarning:
			warnings++
		default:
			notes++
		}
	}
	return
}

// Reaches reports whether any finding is at or above min.
func (r Report) Reaches(min Severity) bool {
	for _, f := range r.Findings {
		if f.Severity >= min {
			return true
		}
	}
	return false
}

// WriteOptions tune Write.
type WriteOptions struct {
	// Color adds ANSI colours to the text format (the CLI sets it on a
	// terminal without NO_COLOR).
	Color bool
	// ToolVersion is brighter's version, written into SARIF.
	ToolVersion string
}

// Write writes r to w in format f. Errors are w's write errors, or an
// unknown format.
func Write(w io.Writer, f Format, r Report, o WriteOptions) error {
	bw := bufio.NewWriter(w)
	var err error
	switch f {
	case FormatText:
		writeText(bw, r, o.Color)
	case FormatJSON:
		err = writeJSON(bw, r)
	case FormatSARIF:
		err = writeSARIF(bw, r, o.ToolVersion)
	case FormatGitHub:
		writeGitHub(bw, r)
	default:
		return fmt.Errorf("write lint report: unknown format %q", f)
	}
	if err != nil {
		return fmt.Errorf("write lint report as %s: %w", f, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write lint report: %w", err)
	}
	return nil
}

// ANSI styles of the text format.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[1;31m"
	ansiYellow = "\x1b[1;33m"
	ansiCyan   = "\x1b[1;36m"
)

func severityStyle(s Severity) string {
	switch s {
	case SeverityError:
		return ansiRed
	case SeverityWarning:
		return ansiYellow
	default:
		return ansiCyan
	}
}

// groups returns the findings of each file, in r.Files order, then any file
// not listed, in finding order.
func (r Report) groups() (names []string, by map[string][]Finding) {
	by = map[string][]Finding{}
	for _, f := range r.Findings {
		by[f.Pos.File] = append(by[f.Pos.File], f)
	}
	seen := map[string]bool{}
	for _, n := range r.Files {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, f := range r.Findings {
		if !seen[f.Pos.File] {
			seen[f.Pos.File] = true
			names = append(names, f.Pos.File)
		}
	}
	return names, by
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func writeText(w *bufio.Writer, r Report, color bool) {
	paint := func(style, s string) string {
		if !color {
			return s
		}
		return style + s + ansiReset
	}
	names, by := r.groups()
	first := true
	for _, name := range names {
		fs := by[name]
		if len(fs) == 0 {
			continue
		}
		if !first {
			w.WriteString("\n")
		}
		first = false
		for _, f := range fs {
			fmt.Fprintf(w, "%s: %s %s: %s\n", paint(ansiBold, f.Pos.String()), paint(severityStyle(f.Severity), f.Severity.String()), paint(ansiDim, f.RuleID), f.Message)
		}
	}
	if r.Incomplete != "" {
		if !first {
			w.WriteString("\n")
		}
		fmt.Fprintln(w, r.incompleteLine())
		return
	}
	e, wn, n := r.Counts()
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "no findings in %s\n", plural(len(r.Files), "file"))
		return
	}
	if !first {
		w.WriteString("\n")
	}
	fmt.Fprintf(w, "%s, %s, %s in %s\n", plural(e, "error"), plural(wn, "warning"), plural(n, "note"), plural(len(names), "file"))
}

// jsonFinding is a finding as the json format writes it.
type jsonFinding struct {
	File         string   `json:"file"`
	Line         int      `json:"line"`
	Column       int      `json:"column"`
	Severity     Severity `json:"severity"`
	Rule         string   `json:"rule"`
	Requirement  string   `json:"requirement,omitempty"`
	Subscription string   `json:"subscription,omitempty"`
	Field        string   `json:"field,omitempty"`
	Message      string   `json:"message"`
	// Related is the subscription's position in the subscriptions file
	// when the finding points into an infrastructure file (--infra).
	Related *jsonPosition `json:"related,omitempty"`
}

// jsonPosition is a position of the json format.
type jsonPosition struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

type jsonReport struct {
	Files    []string      `json:"files"`
	Findings []jsonFinding `json:"findings"`
	// Summary is absent when the lint did not complete (Incomplete).
	Summary    *jsonSummary `json:"summary,omitempty"`
	Incomplete string       `json:"incomplete,omitempty"`
}

type jsonSummary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Notes    int `json:"notes"`
}

func writeJSON(w io.Writer, r Report) error {
	out := jsonReport{Files: append([]string{}, r.Files...), Findings: make([]jsonFinding, 0, len(r.Findings))}
	for _, f := range r.Findings {
		jf := jsonFinding{
			File: f.Pos.File, Line: f.Pos.Line, Column: f.Pos.Column, Severity: f.Severity, Rule: f.RuleID,
			Requirement: f.Requirement, Subscription: f.Subscription, Field: f.Field, Message: f.Message,
		}
		if f.Related.IsValid() {
			jf.Related = &jsonPosition{File: f.Related.File, Line: f.Related.Line, Column: f.Related.Column}
		}
		out.Findings = append(out.Findings, jf)
	}
	if r.Incomplete != "" {
		out.Incomplete = r.Incomplete
		return export.WriteJSON(w, out)
	}
	out.Summary = &jsonSummary{}
	out.Summary.Errors, out.Summary.Warnings, out.Summary.Notes = r.Counts()
	return export.WriteJSON(w, out)
}

// SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/): the subset
// brighter writes.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool       sarifTool     `json:"tool"`
		ColumnKind string        `json:"columnKind"`
		Results    []sarifResult `json:"results"`
		// Invocations is written only for a run that did not complete.
		Invocations []sarifInvocation `json:"invocations,omitempty"`
	}
	sarifInvocation struct {
		ExecutionSuccessful        bool                `json:"executionSuccessful"`
		ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	}
	sarifNotification struct {
		Level   string    `json:"level"`
		Message sarifText `json:"message"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string          `json:"id"`
		ShortDescription     sarifText       `json:"shortDescription"`
		FullDescription      sarifText       `json:"fullDescription"`
		Help                 sarifText       `json:"help"`
		DefaultConfiguration sarifConfig     `json:"defaultConfiguration"`
		Properties           sarifProperties `json:"properties"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifConfig struct {
		Level string `json:"level"`
	}
	sarifProperties struct {
		Requirement string   `json:"requirement,omitempty"`
		Tags        []string `json:"tags"`
	}
	sarifResult struct {
		RuleID    string          `json:"ruleId"`
		RuleIndex int             `json:"ruleIndex"`
		Level     string          `json:"level"`
		Message   sarifText       `json:"message"`
		Locations []sarifLocation `json:"locations"`
		// RelatedLocations holds, for a finding in an infrastructure file
		// (--infra), the subscription in the subscriptions file.
		RelatedLocations []sarifLocation `json:"relatedLocations,omitempty"`
	}
	sarifLocation struct {
		ID               int           `json:"id,omitempty"`
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
		Message          *sarifText    `json:"message,omitempty"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           sarifRegion   `json:"region"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn"`
	}
)

// SARIFSchemaURI is the $schema a SARIF log names.
const SARIFSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// sarifURI turns a file name into a relative URI reference (forward
// slashes, each segment escaped), or a file: URI for an absolute path.
func sarifURI(name string) string {
	p := filepath.ToSlash(name)
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	u := strings.Join(segs, "/")
	if filepath.IsAbs(name) {
		return "file://" + u
	}
	return u
}

func writeSARIF(w io.Writer, r Report, version string) error {
	rules := make([]sarifRule, len(catalogue))
	for i, ru := range catalogue {
		rules[i] = sarifRule{
			ID:                   ru.ID,
			ShortDescription:     sarifText{ru.Summary},
			FullDescription:      sarifText{ru.Summary},
			Help:                 sarifText{ru.Explanation},
			DefaultConfiguration: sarifConfig{ru.Severity.String()},
			Properties:           sarifProperties{Requirement: ru.Requirement, Tags: []string{"brighter", "configuration"}},
		}
	}
	results := make([]sarifResult, 0, len(r.Findings))
	for _, f := range r.Findings {
		line, col := max(f.Pos.Line, 1), max(f.Pos.Column, 1)
		res := sarifResult{
			RuleID: f.RuleID, RuleIndex: ruleIndex[f.RuleID], Level: f.Severity.String(),
			Message: sarifText{f.Message},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: sarifArtifact{URI: sarifURI(f.Pos.File)},
				Region:           sarifRegion{StartLine: line, StartColumn: col},
			}}},
		}
		if f.Related.IsValid() {
			what := "the subscription"
			if f.Subscription != "" {
				what = fmt.Sprintf("subscription %q", f.Subscription)
			}
			res.RelatedLocations = []sarifLocation{{ID: 1,
				PhysicalLocation: sarifPhysical{
					ArtifactLocation: sarifArtifact{URI: sarifURI(f.Related.File)},
					Region:           sarifRegion{StartLine: f.Related.Line, StartColumn: max(f.Related.Column, 1)},
				},
				Message: &sarifText{what + " in the subscriptions file"},
			}}
		}
		results = append(results, res)
	}
	log := sarifLog{
		Schema: SARIFSchemaURI, Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:       sarifTool{Driver: sarifDriver{Name: "brighter lint", Version: version, InformationURI: "https://github.com/brightergo/brighter", Rules: rules}},
			ColumnKind: "unicodeCodePoints",
			Results:    results,
		}},
	}
	if r.Incomplete != "" {
		log.Runs[0].Invocations = []sarifInvocation{{
			ExecutionSuccessful:        false,
			ToolExecutionNotifications: []sarifNotification{{Level: "error", Message: sarifText{r.incompleteLine()}}},
		}}
	}
	return export.WriteJSON(w, log)
}

// GitHub workflow-command escaping
// (https://docs.github.com/actions/reference/workflow-commands-for-github-actions).
var (
	ghData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func writeGitHub(w *bufio.Writer, r Report) {
	for _, f := range r.Findings {
		cmd := "notice"
		switch f.Severity {
		case SeverityError:
			cmd = "error"
		case SeverityWarning:
			cmd = "warning"
		}
		fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,title=%s::%s\n", cmd,
			ghProperty.Replace(f.Pos.File), max(f.Pos.Line, 1), max(f.Pos.Column, 1),
			ghProperty.Replace("brighter lint "+f.RuleID), ghData.Replace(f.Message))
	}
	if r.Incomplete != "" {
		fmt.Fprintf(w, "::error title=%s::%s\n", ghProperty.Replace("brighter lint"), ghData.Replace(r.incompleteLine()))
	}
}

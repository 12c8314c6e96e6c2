package lint_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenReport lints two files: one that trips several rules (among them
// restarts-spend-budget and ordering-spends-budget, whose messages are the
// longest, and the cross-subscription rejection-cycle) and one that does
// not parse.
func goldenReport(t *testing.T) lint.Report {
	t.Helper()
	l := lint.New(rules.Default())
	a := `connections:
  gcp:
    projectId: demo
subscriptions:
  - name: payments
    transport: gcp
    requeueCount: 3
    handler:
      type: builtin
      name: defer
  - name: orders
    transport: sqs
    requeueCount: 0
    deadLetterRoutingKey: orders
    handler:
      type: builtin
      name: defer
  - name: refunds
    transport: sqs
    bufferSize: 10
    requeueCount: 2
    deadLetterRoutingKey: refunds-dlq
    handler:
      type: builtin
      name: defer
    sqs:
      queueType: fifo
  - name: invoices
    transport: gcp
    requeueDelay: 15m
    handler:
      type: builtin
      name: ack
  - name: retry-a
    transport: memory
    deadLetterRoutingKey: retry-b
    handler:
      type: builtin
      name: reject
  - name: retry-b
    transport: memory
    deadLetterRoutingKey: retry-a
    handler:
      type: builtin
      name: reject
`
	b := `subscriptions:
  - name: audit
    transport: memory
    bufferSize: 11
    handler:
      type: builtin
      name: ack
`
	env := func(string) (string, bool) { return "", false }
	fa, _ := l.Source("a.yaml", []byte(a), env)
	fb, _ := l.Source("dir/b.yaml", []byte(b), env)
	r := lint.Report{Files: []string{"a.yaml", "dir/b.yaml"}, Findings: append(fa, fb...)}
	lint.Sort(r.Findings)
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestFormats_Golden(t *testing.T) {
	r := goldenReport(t)
	if len(r.Findings) < 5 {
		t.Fatalf("the golden report has %d findings; the fixtures should trip at least 5", len(r.Findings))
	}
	for _, c := range []struct {
		format lint.Format
		color  bool
		file   string
	}{
		{lint.FormatText, false, "report.txt"},
		{lint.FormatText, true, "report.color.txt"},
		{lint.FormatJSON, false, "report.json"},
		{lint.FormatSARIF, false, "report.sarif"},
		{lint.FormatGitHub, false, "report.github"},
	} {
		t.Run(c.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := lint.Write(&buf, c.format, r, lint.WriteOptions{Color: c.color, ToolVersion: "0.0.0-test"}); err != nil {
				t.Fatal(err)
			}
			golden(t, c.file, buf.Bytes())
		})
	}
}

func TestTextFormat_LinesAndColour(t *testing.T) {
	r := goldenReport(t)
	var plain, color bytes.Buffer
	if err := lint.Write(&plain, lint.FormatText, r, lint.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := lint.Write(&color, lint.FormatText, r, lint.WriteOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain text output carries ANSI escapes")
	}
	if !strings.Contains(color.String(), "\x1b[1;33mwarning\x1b[0m") {
		t.Error("coloured output does not colour the warning severity")
	}
	want := "a.yaml:7:5: warning budget-cannot-run-down: subscription \"payments\": requeueCount 3 cannot run down:"
	if !strings.Contains(plain.String(), want) {
		t.Errorf("text output lacks %q:\n%s", want, plain.String())
	}
	if !strings.HasSuffix(plain.String(), "5 errors, 8 warnings, 4 notes in 2 files\n") {
		t.Errorf("text output summary:\n%s", plain.String())
	}
	var empty bytes.Buffer
	_ = lint.Write(&empty, lint.FormatText, lint.Report{Files: []string{"x.yaml"}}, lint.WriteOptions{})
	if empty.String() != "no findings in 1 file\n" {
		t.Errorf("clean report = %q", empty.String())
	}
}

func TestJSONFormat_Shape(t *testing.T) {
	var buf bytes.Buffer
	if err := lint.Write(&buf, lint.FormatJSON, lint.Report{Files: []string{"x.yaml"}}, lint.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Files    []string         `json:"files"`
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Findings == nil || len(got.Findings) != 0 || len(got.Files) != 1 {
		t.Errorf("empty report JSON = %s; want findings: [] and one file", buf.String())
	}
}

// sarifSchema compiles the official SARIF 2.1.0 schema (OASIS, errata01),
// vendored under testdata from github.com/oasis-tcs/sarif-spec
// sarif-2.1/schema/sarif-schema-2.1.0.json.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const id = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSARIF_ValidatesAgainstSchema(t *testing.T) {
	schema := sarifSchema(t)
	for _, r := range []lint.Report{goldenReport(t), {Files: []string{"clean.yaml"}}} {
		var buf bytes.Buffer
		if err := lint.Write(&buf, lint.FormatSARIF, r, lint.WriteOptions{ToolVersion: "1.2.3"}); err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Fatalf("SARIF output does not validate: %v\n%s", err, buf.String())
		}
		// What GitHub code scanning needs beyond the schema: a ruleId,
		// a relative artifact URI and a startLine on every result.
		var log struct {
			Runs []struct {
				Tool struct {
					Driver struct {
						Rules []struct{ ID string } `json:"rules"`
					} `json:"driver"`
				} `json:"tool"`
				Results []struct {
					RuleID    string `json:"ruleId"`
					RuleIndex int    `json:"ruleIndex"`
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
							Region           struct{ StartLine int } `json:"region"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		run := log.Runs[0]
		if len(run.Tool.Driver.Rules) != len(lint.Rules()) {
			t.Errorf("driver lists %d rules, want %d", len(run.Tool.Driver.Rules), len(lint.Rules()))
		}
		if len(run.Results) != len(r.Findings) {
			t.Fatalf("results = %d, want %d", len(run.Results), len(r.Findings))
		}
		for _, res := range run.Results {
			if run.Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID {
				t.Errorf("ruleIndex %d names %s, result says %s", res.RuleIndex, run.Tool.Driver.Rules[res.RuleIndex].ID, res.RuleID)
			}
			loc := res.Locations[0].PhysicalLocation
			if loc.Region.StartLine < 1 || loc.ArtifactLocation.URI == "" || strings.HasPrefix(loc.ArtifactLocation.URI, "/") {
				t.Errorf("result location %+v: want a relative URI and a line", loc)
			}
		}
	}
}

func TestSARIF_SchemaCatchesABrokenLog(t *testing.T) {
	// The validation above could fail: a log without its version does not
	// validate.
	schema := sarifSchema(t)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"runs": []}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err == nil {
		t.Fatal("a SARIF log without version validated")
	}
}

func TestGitHubFormat_Escaping(t *testing.T) {
	r := lint.Report{Findings: []lint.Finding{{
		RuleID: lint.RuleBudgetZero, Severity: lint.SeverityWarning,
		Pos:     config.Position{File: "conf,dir/a:b.yaml", Line: 3, Column: 5},
		Message: "100% bad\nsecond line",
	}, {
		RuleID: lint.RuleDrainShorterThanHandler, Severity: lint.SeverityNote,
		Pos: config.Position{File: "a.yaml", Line: 1, Column: 1}, Message: "note",
	}}}
	var buf bytes.Buffer
	if err := lint.Write(&buf, lint.FormatGitHub, r, lint.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "::warning file=conf%2Cdir/a%3Ab.yaml,line=3,col=5,title=brighter lint budget-zero::100%25 bad%0Asecond line\n" +
		"::notice file=a.yaml,line=1,col=1,title=brighter lint drain-shorter-than-handler::note\n"
	if buf.String() != want {
		t.Errorf("github output:\n%q\nwant:\n%q", buf.String(), want)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range lint.Formats {
		if got, err := lint.ParseFormat(strings.ToUpper(f)); err != nil || string(got) != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := lint.ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "text, json, sarif, github") {
		t.Errorf("ParseFormat(xml) error = %v", err)
	}
}

package lint_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/infra"
	"github.com/brightergo/brighter/internal/lint/infra/terraform"
	"github.com/brightergo/brighter/internal/lint/live"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// goldenInfraReport lints subscriptions files of testdata/infra/terraform
// against their trigger files (plan JSON and .tf), as `lint --infra`
// does: findings in the infrastructure files, with the subscriptions as
// related positions, and one (infra-undeclared) in a subscriptions file.
func goldenInfraReport(t *testing.T) lint.Report {
	t.Helper()
	tr := rules.Default()
	l := lint.New(tr)
	var r lint.Report
	for _, c := range []struct{ dir, trigger string }{
		{"native-limit-drift", "trigger.json"},
		{"budget-outranked", "trigger.tf"},
		{"redrive-allow-forbids-source", "trigger.tf"},
		{"retention-shorter-than-budget", "trigger.json"},
		{"infra-undeclared", "trigger.tf"},
	} {
		name := filepath.ToSlash(filepath.Join("testdata/infra/terraform", c.dir))
		read := func(file string) []byte {
			data, err := os.ReadFile(filepath.Join("..", "..", name, file))
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
		rs, err := infra.ReadData(name+"/"+c.trigger, read(c.trigger), false, terraform.Readers())
		if err != nil {
			t.Fatal(err)
		}
		set := &infra.Set{}
		set.Add(name+"/"+c.trigger, rs)
		set.Attach()
		fs, f := l.Source(name+"/brighter.yaml", read("brighter.yaml"), func(string) (string, bool) { return "", false })
		if f == nil {
			t.Fatalf("%s: %+v", c.dir, fs)
		}
		fs = append(fs, live.Check(context.Background(), f, live.InfraProbers(set), tr)...)
		fs = append(fs, live.CheckInfra(f, set, tr, live.InfraOptions{})...)
		r.Files = append(r.Files, name+"/brighter.yaml", name+"/"+c.trigger)
		r.Findings = append(r.Findings, fs...)
	}
	lint.Sort(r.Findings)
	return r
}

// TestFormats_GoldenInfra: the SARIF, GitHub and JSON reports of --infra
// findings point into the infrastructure files (line and column there) and
// carry the subscription as the related location.
func TestFormats_GoldenInfra(t *testing.T) {
	r := goldenInfraReport(t)
	related := 0
	for _, f := range r.Findings {
		if f.Related.IsValid() {
			related++
		}
	}
	if len(r.Findings) < 6 || related < 5 {
		t.Fatalf("the golden --infra report has %d findings, %d with a related position; the fixtures should trip at least 6, 5 in infrastructure files", len(r.Findings), related)
	}
	for _, c := range []struct {
		format lint.Format
		file   string
	}{
		{lint.FormatText, "report.infra.txt"},
		{lint.FormatJSON, "report.infra.json"},
		{lint.FormatSARIF, "report.infra.sarif"},
		{lint.FormatGitHub, "report.infra.github"},
	} {
		t.Run(c.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := lint.Write(&buf, c.format, r, lint.WriteOptions{ToolVersion: "0.0.0-test"}); err != nil {
				t.Fatal(err)
			}
			golden(t, c.file, buf.Bytes())
		})
	}
	var buf bytes.Buffer
	if err := lint.Write(&buf, lint.FormatSARIF, r, lint.WriteOptions{ToolVersion: "1.2.3"}); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sarifSchema(t).Validate(inst); err != nil {
		t.Errorf("the --infra SARIF log does not validate against the SARIF 2.1.0 schema: %v", err)
	}
}

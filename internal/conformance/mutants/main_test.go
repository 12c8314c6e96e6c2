package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogueRecorded checks the catalogue without running it (a
// run is `make mutants`): every mutant has a unique name, its code still
// occurs exactly once in its file (else it is stale: update it), its
// packages exist, and docs/conformance.md records it killed (regenerate its
// row with `go run ./internal/conformance/mutants -only NAME -write
// docs/conformance.md`).
func TestCatalogueRecorded(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "conformance.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	if i < 0 || j < i {
		t.Fatalf("docs/conformance.md has no %s ... %s section", beginMarker, endMarker)
	}
	rows := recordedRows(s[i:j])
	seen := map[string]bool{}
	for _, m := range catalogue() {
		if seen[m.Name] {
			t.Errorf("mutant %s: name used twice", m.Name)
		}
		seen[m.Name] = true
		if m.Name == "" || m.What == "" || m.Run == "" {
			t.Errorf("mutant %q: name, what and run are required", m.Name)
		}
		src, err := os.ReadFile(filepath.Join(root, m.File))
		if err != nil {
			t.Errorf("mutant %s: %v", m.Name, err)
		} else if n := bytes.Count(src, []byte(m.Old)); n != 1 {
			t.Errorf("mutant %s: its code occurs %d times in %s, want 1: update the mutant", m.Name, n, m.File)
		}
		for _, p := range m.pkgs() {
			if st, err := os.Stat(filepath.Join(root, p)); err != nil || !st.IsDir() {
				t.Errorf("mutant %s: package %s is not a directory of the repository", m.Name, p)
			}
		}
		row, ok := rows[m.Name]
		if !ok {
			t.Errorf("mutant %s has no row in docs/conformance.md: go run ./internal/conformance/mutants -only %s -write docs/conformance.md", m.Name, m.Name)
		} else if !strings.Contains(row, "| killed |") {
			t.Errorf("mutant %s is not recorded killed in docs/conformance.md: %s", m.Name, row)
		}
	}
	for name := range rows {
		if !seen[name] && name != "mutant" {
			t.Errorf("docs/conformance.md records %s, which the catalogue does not have", name)
		}
	}
}

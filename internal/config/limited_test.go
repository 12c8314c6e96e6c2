package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"

	"github.com/brightergo/brighter/internal/config"
)

// ParseLimited reads other YAML and JSON files (the infrastructure files of
// lint --infra) under the subscriptions file's limits, and names the limit
// as one of "a file brighter reads".
func TestParseLimited_AppliesTheSubscriptionsFileLimitsToOtherFiles(t *testing.T) {
	f, err := config.ParseLimited("m.yaml", []byte("\xEF\xBB\xBFa: 1\n---\nb: [x, y]\n"))
	if err != nil || len(f.Docs) != 2 {
		t.Fatalf("two documents after a BOM: %v, %+v", err, f)
	}
	for name, c := range map[string]struct{ src, want string }{
		"syntax": {"a: [\n", "m.yaml:"},
		"depth":  {"a: " + strings.Repeat("[", 40), "m.yaml:1:35: mappings and sequences nest deeper than the limit of 32 levels here"},
		"value":  {"a: " + strings.Repeat("v", config.MaxScalarSize+1), "m.yaml:1:4: a value of 1048577 bytes starts here"},
		"size":   {"a: 1\n# " + strings.Repeat("x", config.MaxFileSize), "over the limit of 16777216 bytes (16 MiB) for a file brighter reads"},
	} {
		_, err := config.ParseLimited("m.yaml", []byte(c.src))
		var e *config.Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "subscriptions file") {
			t.Errorf("%s: %v, want a *config.Error containing %q", name, err, c.want)
		}
	}
}

// An AliasBudget charges each use the nodes of what it refers to, and once
// spent stays spent.
func TestAliasBudget_ChargesWhatEachUseBringsIn(t *testing.T) {
	f, err := config.ParseLimited("a.yaml", []byte("big: &big [1, 2, 3, 4, 5, 6, 7, 8, 9]\nuse: *big\n"))
	if err != nil {
		t.Fatal(err)
	}
	target := config.Anchors(f.Docs[0].Body)["big"]
	if target == nil {
		t.Fatal("anchor big not found")
	}
	var count int
	ast.Walk(visitor(func() { count++ }), target)
	b := config.NewAliasBudget()
	uses := config.MaxAliasNodes / count
	for i := range uses {
		if !b.Spend(target) {
			t.Fatalf("budget spent after %d uses of %d nodes, want %d uses", i, count, uses)
		}
	}
	if b.Spend(target) || b.Spend(nil) {
		t.Fatalf("budget holds after %d uses of %d nodes", uses+1, count)
	}
}

type visitor func()

func (v visitor) Visit(ast.Node) ast.Visitor { v(); return v }

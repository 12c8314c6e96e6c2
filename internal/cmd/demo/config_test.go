package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoConfigPerRunPath: without --write-config each run of
// demo --keep-running writes a new file of its own in the temporary
// directory, never the fixed /tmp/brighter-demo.yaml.
func TestDemoConfigPerRunPath(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a, err := writeDemoConfig("", []byte("subscriptions: []\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := writeDemoConfig("", []byte("subscriptions: []\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Dir(a) != os.Getenv("TMPDIR") || !strings.HasPrefix(filepath.Base(a), "brighter-demo-") || !strings.HasSuffix(a, ".yaml") {
		t.Fatalf("paths %q and %q: want two distinct brighter-demo-*.yaml in $TMPDIR", a, b)
	}
	if got, err := os.ReadFile(a); err != nil || string(got) != "subscriptions: []\n" {
		t.Fatalf("read %s = %q, %v", a, got, err)
	}
}

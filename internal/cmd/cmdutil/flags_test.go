package cmdutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// TestSelectSubscriptions_ANameGivenTwiceIsOneSubscription: the
// subscriptions named come in the order first named, a repeated name once
// (two pumps on one channel would double its consumers), and an unknown
// name is an error naming the valid ones.
func TestSelectSubscriptions_ANameGivenTwiceIsOneSubscription(t *testing.T) {
	f, err := config.Parse("subs.yaml", []byte(`subscriptions:
  - name: orders
    transport: memory
    channelName: orders
    routingKey: orders
    handler: {type: builtin, name: ack}
  - name: payments
    transport: memory
    channelName: payments
    routingKey: payments
    handler: {type: builtin, name: ack}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ names, want []string }{
		{nil, []string{"orders", "payments"}},
		{[]string{"orders", "orders"}, []string{"orders"}},
		{[]string{"payments", "orders", "payments", "orders"}, []string{"payments", "orders"}},
	} {
		subs, err := SelectSubscriptions(f, c.names)
		if err != nil {
			t.Fatalf("SelectSubscriptions(%q): %v", c.names, err)
		}
		var got []string
		for _, s := range subs {
			got = append(got, s.Name)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("SelectSubscriptions(%q) = %q, want %q", c.names, got, c.want)
		}
	}
	if _, err := SelectSubscriptions(f, []string{"orders", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "[orders payments]") {
		t.Errorf("an unknown name: %v", err)
	}
}

// TestConfigNotFound_HintOnlyForTheDefaultFile: a missing default file gets
// the hint naming -c/--config; a missing file the user named says where it
// was looked for and which YAML files are there (not to name a file: they
// did); any other error comes back as it is.
func TestConfigNotFound_HintOnlyForTheDefaultFile(t *testing.T) {
	missing := &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}
	if got := ConfigNotFound(missing, DefaultConfigPath).Error(); !strings.Contains(got, "-c/--config FILE") || !strings.Contains(got, DefaultConfigPath) {
		t.Errorf("the default file's error = %q, want the hint", got)
	}
	dir := t.TempDir()
	for _, n := range []string{"orders.yaml", "b.yml", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	named := ConfigNotFound(missing, filepath.Join(dir, "mine.yaml"))
	if got := named.Error(); !errors.Is(named, fs.ErrNotExist) || got != "open x: file does not exist (looked for in "+dir+"; the YAML files there: b.yml, orders.yaml)" {
		t.Errorf("a named file's error = %q, want where it was looked for and the YAML files there", got)
	}
	if got := ConfigNotFound(missing, filepath.Join(dir, "no", "mine.yaml")).Error(); !strings.HasSuffix(got, "(looked for in "+filepath.Join(dir, "no")+", which does not exist)") {
		t.Errorf("a file in a missing directory: %q", got)
	}
	other := errors.New("line 3: bad")
	if got := ConfigNotFound(other, DefaultConfigPath); got != other {
		t.Errorf("another error = %v, want it as it is", got)
	}
}

package consume

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
)

// TestNewCmdConsume_Flags: consume's flags reach the options runConsume
// gets (the file, the repeatable subscription, the listener, the
// dashboard), and a positional argument is refused before anything runs.
func TestNewCmdConsume_Flags(t *testing.T) {
	f := factory.New(&iostreams.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, "", "")
	var got *Options
	cmd := NewCmdConsume(f, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"-c", "orders.yaml", "-s", "a", "--subscription", "b,c", "--listen", "9464", "--tui"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.configPath != "orders.yaml" || !slices.Equal(got.subscriptions, []string{"a", "b", "c"}) || got.listen != "9464" || !got.tui {
		t.Fatalf("options %+v; want orders.yaml, [a b c], 9464 and the dashboard", got)
	}
	if got.transports == nil || got.exit == nil || got.signals == nil {
		t.Fatal("the options lack the factory's transports, the process exit or the signals")
	}

	got = nil
	cmd = NewCmdConsume(f, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"extra"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || got != nil {
		t.Fatalf("a positional argument: err %v, runF called %v; want refused before runF", err, got != nil)
	}
}

package watch

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
)

// TestNormaliseTargets_AddsHTTPAndRefusesOtherSchemes: a --target without a
// scheme gets http://, a trailing slash is dropped, and a scheme other than
// http or https is refused.
func TestNormaliseTargets_AddsHTTPAndRefusesOtherSchemes(t *testing.T) {
	got, err := normaliseTargets([]string{"127.0.0.1:9464", "https://a.example/"})
	if err != nil || fmt.Sprint(got) != "[http://127.0.0.1:9464 https://a.example]" {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := normaliseTargets([]string{"ftp://x"}); err == nil {
		t.Fatal("ftp target accepted")
	}
}

// TestNormaliseTargets_PortAloneIsLoopback: --target takes the address
// given to consume --listen, so a port alone means 127.0.0.1 as it does
// there (not a host named "18464"); an invalid port alone is refused.
func TestNormaliseTargets_PortAloneIsLoopback(t *testing.T) {
	for in, want := range map[string]string{
		"18464":            "http://127.0.0.1:18464",
		":18464":           "http://127.0.0.1:18464",
		"0.0.0.0:9464":     "http://0.0.0.0:9464",
		"orders-1:9464":    "http://orders-1:9464",
		"http://18464":     "http://18464",
		"[::1]:9464":       "http://[::1]:9464",
		"orders-1.example": "http://orders-1.example",
	} {
		got, err := normaliseTargets([]string{in})
		if err != nil || len(got) != 1 || got[0] != want {
			t.Errorf("normaliseTargets(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"99999", ":70000"} {
		if got, err := normaliseTargets([]string{in}); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("normaliseTargets(%q) = %v, %v; want it refused: port out of range", in, got, err)
		}
	}
	got, err := runArgs(t, "-t", "18464")
	if err != nil || fmt.Sprint(got) != "[http://127.0.0.1:18464]" {
		t.Fatalf("watch -t 18464: %v, %v; want [http://127.0.0.1:18464]", got, err)
	}
}

// runArgs runs watch with args, stopping at the parsed options, and
// returns the targets it would watch and its error.
func runArgs(t *testing.T, args ...string) ([]string, error) {
	t.Helper()
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	var got []string
	cmd := NewCmdWatch(factory.New(io, "", ""), func(o *Options) error { got = o.targets; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return got, err
}

// TestWatch_ConfigWithoutTarget_SaysToGiveTheListenAddress: -c/--config,
// the subscriptions file every command takes, is accepted, but the file
// names no --listen address: alone it is a usage error (exit 2) saying
// watch needs --target, the address given to consume --listen.
func TestWatch_ConfigWithoutTarget_SaysToGiveTheListenAddress(t *testing.T) {
	for _, flag := range []string{"-c", "--config"} {
		_, err := runArgs(t, flag, "s.yaml")
		var ee *cmdutil.ExitError
		if !errors.As(err, &ee) || ee.Code != cmdutil.ExitUsage {
			t.Fatalf("watch %s s.yaml: %v, want a usage error (exit %d)", flag, err, cmdutil.ExitUsage)
		}
		for _, want := range []string{"--config s.yaml", "--listen address", "names none", "give --target HOST:PORT", defaultWatchTarget} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("watch %s s.yaml: %q lacks %q", flag, err, want)
			}
		}
	}
}

// TestWatch_ConfigWithTarget_WatchesTheTarget: with --target as well,
// -c/--config is accepted and not read (a script passing -c to every
// command works), and watch watches the target.
func TestWatch_ConfigWithTarget_WatchesTheTarget(t *testing.T) {
	got, err := runArgs(t, "-c", "does-not-exist.yaml", "-t", "orders-1:9464")
	if err != nil || fmt.Sprint(got) != "[http://orders-1:9464]" {
		t.Fatalf("watch -c -t: targets %v, %v; want [http://orders-1:9464], nil", got, err)
	}
}

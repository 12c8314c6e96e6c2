package demo_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestDemoEmulator_RunsTheStoryOnGooglesEmulator runs `brighter demo --emulator
// HOST:PORT` against Google's own Pub/Sub emulator (the test binary's shared
// one, so no second Java start): the same story as on the embedded emulator, in
// a project of its own, and with --keep-running a subscriptions file naming
// that emulator and project, after which the demo returns (the emulator is not
// its to keep). --listen with --emulator and a malformed address are usage
// errors.
func TestDemoEmulator_RunsTheStoryOnGooglesEmulator(t *testing.T) {
	t.Parallel() // waits on the shared Pub/Sub emulator, in a project of its own
	emu, err := gcptest.Shared()
	if err != nil {
		t.Fatalf("Google's Pub/Sub emulator: %v", err)
	}
	cfg := filepath.Join(t.TempDir(), "demo.yaml")
	// --overwrite replaces a file that exists (without it the demo
	// refuses it: testdata/scripts/usage_errors.txtar)
	if err := os.WriteFile(cfg, []byte("# an earlier run's file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
	code := run(t.Context(), streams, []string{"demo", "--emulator", emu.Addr, "--pump", "proactor", "--keep-running", "--write-config", cfg, "--overwrite"})
	if code != cmdutil.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{
		"Using the Pub/Sub emulator at " + emu.Addr + ", project brighter-demo-",
		"delivery 3 of order-1003-poison: delivery count 2 (Pub/Sub delivery_attempt 3)",
		"the budget fires on delivery 3: reject with DeliveryError",
		`"orders-native-dlq" is empty`,
		"The emulator at " + emu.Addr + " keeps running",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "Press Ctrl-C") {
		t.Errorf("the demo waits for Ctrl-C on an emulator it does not own:\n%s", out.String())
	}
	file, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(file), "an earlier run's file") || !strings.Contains(string(file), "emulatorHost: "+emu.Addr) || !strings.Contains(string(file), "projectId: brighter-demo-") {
		t.Errorf("subscriptions file:\n%s", file)
	}

	for _, args := range [][]string{
		{"demo", "--emulator", emu.Addr, "--listen", "127.0.0.1:0"},
		{"demo", "--emulator", "no-port"},
	} {
		out.Reset()
		errOut.Reset()
		if code := run(t.Context(), streams, args); code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, cmdutil.ExitUsage, errOut.String())
		}
	}
}

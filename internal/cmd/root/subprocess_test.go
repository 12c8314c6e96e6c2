package root_test

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"runtime/debug"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// buildSetting is the value of the build setting key in bi ("" when unset).
func buildSetting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// TestSubprocessBrighterIsWhatTheEnvironmentChooses checks the `brighter`
// the tests start as a process (the first on the PATH, as scripts and
// exec.Command find it): by default a plain build of ./cmd/brighter, static
// and -trimpath as make build builds it, without the race detector whatever
// this test binary was built with; with BRIGHTER_TEST_SUBPROCESS=self (make
// test-stress), this test binary, race detector included.
func TestSubprocessBrighterIsWhatTheEnvironmentChooses(t *testing.T) {
	t.Parallel() // reads files only
	self, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build information in the test binary")
	}
	bin := cmdtest.Bin(t)
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatalf("build information of %s: %v", bin, err)
	}
	switch mode := os.Getenv(cmdtest.SubprocessEnv); mode {
	case cmdtest.SubprocessSelf:
		if bi.Path != self.Path {
			t.Errorf("%s=%s: brighter on the PATH is %s (%s), want this test binary (%s)", cmdtest.SubprocessEnv, mode, bin, bi.Path, self.Path)
		}
		if got, want := buildSetting(bi, "-race"), buildSetting(self, "-race"); got != want {
			t.Errorf("%s=%s: brighter on the PATH has -race=%q, want this test binary's %q", cmdtest.SubprocessEnv, mode, got, want)
		}
	default:
		if bi.Path != "github.com/brightergo/brighter/cmd/brighter" {
			t.Errorf("brighter on the PATH is %s (%s), want a build of ./cmd/brighter", bin, bi.Path)
		}
		for key, want := range map[string]string{"-race": "", "CGO_ENABLED": "0", "-trimpath": "true"} {
			if got := buildSetting(bi, key); got != want {
				t.Errorf("brighter on the PATH (%s) has %s=%q, want %q", bin, key, got, want)
			}
		}
		// And it runs: the version command answers as the test binary's would.
		out, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s version: %v\n%s", bin, err, out)
		}
	}
}

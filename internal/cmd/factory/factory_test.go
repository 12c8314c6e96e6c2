package factory

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/redact"
)

// TestLogger_FollowsTheLogFlags: the logger writes JSON to stderr with
// --log-format json, drops records under --log-level, redacts the run's
// secrets, and an unknown format or level is a usage error (exit 2) naming
// the valid values.
func TestLogger_FollowsTheLogFlags(t *testing.T) {
	var errOut bytes.Buffer
	r := &redact.Redactor{}
	r.Add("s3cret-value")
	f := New(&iostreams.IOStreams{ErrOut: &errOut, Redactor: r}, "", "")
	f.LogFormat, f.LogLevel = "json", "warn"
	log, err := f.Logger()
	if err != nil {
		t.Fatal(err)
	}
	log.Info("below the level")
	log.Warn("kept", "token", "s3cret-value")
	got := errOut.String()
	if strings.Contains(got, "below the level") || !strings.Contains(got, `"msg":"kept"`) || strings.Contains(got, "s3cret-value") {
		t.Fatalf("stderr %q: want only the warning, as JSON, with the secret redacted", got)
	}
	for _, bad := range []struct{ format, level, want string }{
		{"yaml", "info", "--log-format"},
		{"text", "loud", "--log-level"},
	} {
		f.LogFormat, f.LogLevel = bad.format, bad.level
		_, err := f.Logger()
		var ee *cmdutil.ExitError
		if !errors.As(err, &ee) || ee.Code != cmdutil.ExitUsage || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("format %q level %q: err %v, want a usage error naming %s", bad.format, bad.level, err, bad.want)
		}
	}
}

// TestVersion_TakesTheLdflagsValues: the factory's version is the build's,
// with the -ldflags version and commit main passes winning.
func TestVersion_TakesTheLdflagsValues(t *testing.T) {
	v := New(&iostreams.IOStreams{}, "v1.2.3", "feedface").Version()
	if v.Version != "v1.2.3" || v.Revision != "feedface" {
		t.Fatalf("version %+v, want v1.2.3 at feedface", v)
	}
}

package version

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/export"
)

// TestNewCmdVersion_OutputFlag: -o takes its value in any case and hands
// runF the canonical format; an unknown format is refused before runF.
func TestNewCmdVersion_OutputFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string
		refused bool
	}{
		{args: nil, want: export.Text},
		{args: []string{"-o", "JSON"}, want: export.JSON},
		{args: []string{"--output", "yaml"}, refused: true},
	} {
		f := factory.New(&iostreams.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, "", "")
		var got *Options
		cmd := NewCmdVersion(f, func(o *Options) error { got = o; return nil })
		cmd.SetArgs(append([]string{}, tc.args...))
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if tc.refused {
			if err == nil || got != nil {
				t.Errorf("%v: err %v, runF called %v; want refused before runF", tc.args, err, got != nil)
			}
			continue
		}
		if err != nil || got == nil || got.Output != tc.want {
			t.Errorf("%v: err %v, options %+v; want output %q", tc.args, err, got, tc.want)
		}
	}
}

// TestRunVersion_JSON: -o json writes the version as one JSON document
// with its version field.
func TestRunVersion_JSON(t *testing.T) {
	var out bytes.Buffer
	f := factory.New(&iostreams.IOStreams{Out: &out}, "v9.9.9", "feedface")
	if err := runVersion(t.Context(), &Options{IO: f.IOStreams, Version: f.Version, Output: export.JSON}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"version": "v9.9.9"`) || !strings.Contains(out.String(), `"revision": "feedface"`) {
		t.Errorf("output %q, want the -ldflags version and commit", out.String())
	}
}

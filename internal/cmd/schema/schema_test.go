package schema

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
)

// TestNewCmdSchema_RefusesArguments: schema takes no argument; one is
// refused before runF.
func TestNewCmdSchema_RefusesArguments(t *testing.T) {
	f := factory.New(&iostreams.IOStreams{Out: &bytes.Buffer{}}, "", "")
	called := false
	cmd := NewCmdSchema(f, func(*Options) error { called = true; return nil })
	cmd.SetArgs([]string{"extra"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || called {
		t.Fatalf("err %v, runF called %v; want the argument refused before runF", err, called)
	}
}

// TestRunSchema_WritesTheSchema: runSchema writes config.Schema, a JSON
// document, to stdout unchanged.
func TestRunSchema_WritesTheSchema(t *testing.T) {
	var out bytes.Buffer
	if err := runSchema(t.Context(), &Options{IO: &iostreams.IOStreams{Out: &out}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), config.Schema()) || !json.Valid(out.Bytes()) {
		t.Fatalf("wrote %d bytes, want the %d of config.Schema, valid JSON", out.Len(), len(config.Schema()))
	}
}

package handler

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/pump"
)

func TestNew_BuildsEachType(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	cmd := script(t, dir, "s", `env > "$ENV_FILE"; exit 75`)
	srv, reqs := server(t, status(http.StatusUnprocessableEntity))

	cases := []struct {
		name    string
		cfg     config.Handler
		count   int
		outcome pump.Outcome
	}{
		{"builtin name", config.Handler{Type: config.HandlerBuiltin, Name: config.BuiltinReject}, 0, pump.Reject},
		{"builtin script first", config.Handler{Type: config.HandlerBuiltin, Script: []string{"defer", "ack"}}, 0, pump.Defer},
		{"builtin script last repeats", config.Handler{Type: config.HandlerBuiltin, Script: []string{"defer", "ack"}}, 9, pump.Ack},
		{"exec", config.Handler{Type: config.HandlerExec, Command: cmd, Env: map[string]string{"ENV_FILE": envFile}, Timeout: 30 * time.Second}, 0, pump.Defer},
		{"http", config.Handler{Type: config.HandlerHTTP, URL: srv.URL, Headers: map[string]string{"X-Api-Key": "k"}, Timeout: 30 * time.Second, TLS: &config.TLS{}}, 0, pump.Unacceptable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := New(c.cfg, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if r := h(context.Background(), testMessage(c.count)); r.Outcome != c.outcome {
				t.Fatalf("%+v, want %v", r, c.outcome)
			}
		})
	}
	if env := readEnv(t, envFile); env["ENV_FILE"] != envFile {
		t.Errorf("exec env from config not passed: %v", env["ENV_FILE"])
	}
	if got := reqs(); len(got) != 1 || got[0].header.Get("X-Api-Key") != "k" {
		t.Errorf("http headers from config not sent: %v", got)
	}
}

// TestNew_RefusesBadHandlerConfigs: New fails on an unknown type or built-
// in, a bad script, a command not on PATH, a malformed URL and a CA file
// that does not exist.
func TestNew_RefusesBadHandlerConfigs(t *testing.T) {
	missingCA := filepath.Join(t.TempDir(), "none.pem")
	if _, err := os.Stat(missingCA); err == nil {
		t.Fatal("setup: the CA file exists")
	}
	for name, cfg := range map[string]config.Handler{
		"unknown type":    {Type: "grpc"},
		"unknown builtin": {Type: config.HandlerBuiltin, Name: "explode"},
		"bad script":      {Type: config.HandlerBuiltin, Script: []string{"defer", "explode"}},
		"missing command": {Type: config.HandlerExec, Command: "brighter-no-such-command-xyz"},
		"bad url":         {Type: config.HandlerHTTP, URL: "not a url"},
		"missing ca":      {Type: config.HandlerHTTP, URL: "https://x", TLS: &config.TLS{CAFile: missingCA}},
	} {
		if _, err := New(cfg, nil); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

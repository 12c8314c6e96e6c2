package sqstest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStartFailsWithInstallHintWhenFauxqsIsMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	e, err := Start(context.Background())
	if err == nil {
		e.Stop()
		t.Fatal("Start succeeded without node_modules/fauxqs")
	}
	if !strings.Contains(err.Error(), "npm ci") {
		t.Errorf("error %q does not say to run npm ci", err)
	}
}

func TestStartServesHealthOnLoopback(t *testing.T) {
	e, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	if !strings.HasPrefix(e.Endpoint, "http://127.0.0.1:") {
		t.Errorf("endpoint %q is not on 127.0.0.1", e.Endpoint)
	}
	if !healthy(context.Background(), e.Endpoint) {
		t.Error("emulator not healthy")
	}
	e.Stop()
	if healthy(context.Background(), e.Endpoint) {
		t.Error("emulator still answers after Stop")
	}
}

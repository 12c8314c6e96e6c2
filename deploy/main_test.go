package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/brightergo/brighter/internal/ociimage"
)

// binary is the brighter binary built once for the package's tests.
var binary struct {
	once sync.Once
	path string
	err  error
}

// brighterBinary builds ./cmd/brighter from this commit as the image does
// (ociimage.BuildBinary: static, -trimpath), once per test binary, and
// returns its path.
func brighterBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "brighter-deploy-test-")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(dir, "brighter")
		binary.err = ociimage.BuildBinary(context.Background(), ociimage.BuildOptions{ModuleDir: "..", Out: binary.path, Arch: runtime.GOARCH})
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary.path != "" {
		os.RemoveAll(filepath.Dir(binary.path))
	}
	os.Exit(code)
}

package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// binary is the brighter binary built once for the package's tests.
var binary struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// brighterBinary builds ./cmd/brighter from this commit, as the image does
// (CGO off, -trimpath), once per test binary, and returns its path.
func brighterBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "brighter-deploy-test-")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(dir, "brighter")
		cmd := exec.Command("go", "build", "-trimpath", "-o", binary.path, "./cmd/brighter")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		binary.out, binary.err = cmd.CombinedOutput()
	})
	if binary.err != nil {
		t.Fatalf("go build ./cmd/brighter: %v\n%s", binary.err, binary.out)
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

package version

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// moduleRoot is the repository root, relative to this package.
const moduleRoot = "../../.."

// gitOut runs git in dir and returns its trimmed output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// versionOf runs bin version -o json.
func versionOf(t *testing.T, bin string) cmdutil.VersionInfo {
	t.Helper()
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("%s version -o json: %v", bin, err)
	}
	var v cmdutil.VersionInfo
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s version -o json = %s: %v", bin, out, err)
	}
	return v
}

// pseudoVersion is the version Go stamps on a build from a checkout with
// VCS stamping on: v0.0.0-<commit time>-<12 hex digits of the commit>.
var pseudoVersion = regexp.MustCompile(`^v0\.0\.0-\d{14}-([0-9a-f]{12})(\+dirty)?$`)

// TestVersionPerBuildPath builds the binary the ways a user does
// and checks what `brighter version` says for each, as
// docs/commands/version.md describes:
//   - make build stamps git describe's version and the commit (-ldflags, as
//     make image does; the image itself is checked by
//     deploy.TestImage_ReproducibleAndRunsFromDockerAndOCIArchives);
//   - go build from a clone with VCS stamping on: Go's pseudo-version and the
//     commit;
//   - go build with VCS stamping off (GOFLAGS=-buildvcs=false, or a git
//     worktree, where Go finds no repository): (devel) and no commit.
//
// `go install ...@v1.2.3` (the module version in the build info) is
// TestVersionFromBuildInfo.
func TestVersionPerBuildPath(t *testing.T) {
	t.Parallel() // builds in a clone and a temporary directory of its own; overlaps the tests that wait
	root, err := filepath.Abs(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	head := gitOut(t, root, "rev-parse", "HEAD")
	tmp := t.TempDir()

	t.Run("make build", func(t *testing.T) {
		bin := filepath.Join(tmp, "make", "brighter")
		mk := exec.Command("make", "-C", root, "build", "BIN="+bin)
		if out, err := mk.CombinedOutput(); err != nil {
			t.Fatalf("make build: %v\n%s", err, out)
		}
		v := versionOf(t, bin)
		want := gitOut(t, root, "describe", "--tags", "--always", "--dirty")
		if v.Version != want || v.Revision != head {
			t.Errorf("make build: version %q revision %q, want %q %q (git describe, rev-parse HEAD)", v.Version, v.Revision, want, head)
		}
		if v.Modified != strings.HasSuffix(want, "-dirty") {
			t.Errorf("make build: modified %v for version %q", v.Modified, want)
		}
	})

	// A clone of HEAD: .git is a directory there (Go does not stamp a git
	// worktree, whose .git is a file), and the tree is clean.
	clone := filepath.Join(tmp, "clone")
	if out, err := exec.Command("git", "clone", "-q", "--no-checkout", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", clone, "checkout", "-q", head).CombinedOutput(); err != nil {
		t.Fatalf("git checkout: %v\n%s", err, out)
	}
	goBuild := func(t *testing.T, buildvcs, out string) cmdutil.VersionInfo {
		t.Helper()
		// Static and -trimpath, as make build and the image build it: the
		// clone's packages and the dependency tree come from the build
		// cache those builds filled.
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs="+buildvcs, "-o", out, "./cmd/brighter")
		cmd.Dir = clone
		cmd.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build -buildvcs=%s: %v\n%s", buildvcs, err, b)
		}
		return versionOf(t, out)
	}
	t.Run("go build, VCS stamping on", func(t *testing.T) {
		v := goBuild(t, "true", filepath.Join(tmp, "vcs", "brighter"))
		m := pseudoVersion.FindStringSubmatch(v.Version)
		if m == nil || m[1] != head[:12] || m[2] != "" {
			t.Errorf("version %q, want a clean pseudo-version of commit %s", v.Version, head[:12])
		}
		if v.Revision != head || v.Modified || v.Time == "" {
			t.Errorf("revision %q modified %v time %q, want %s, false and the commit time", v.Revision, v.Modified, v.Time, head)
		}
	})
	t.Run("go build, VCS stamping off", func(t *testing.T) {
		v := goBuild(t, "false", filepath.Join(tmp, "novcs", "brighter"))
		if v.Version != "(devel)" || v.Revision != "" || v.Modified {
			t.Errorf("version %+v, want (devel), no revision, not modified", v)
		}
	})
}

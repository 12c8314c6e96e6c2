package deploy_test

import (
	"archive/tar"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/brightergo/brighter/internal/ociimage"
)

// Test image identity: fixed, so two builds must agree byte for byte.
const (
	testVersion  = "v0.0.0-imagetest"
	testRevision = "0123456789abcdef0123456789abcdef01234567"
)

var testCreated = time.Unix(1700000000, 0).UTC()

// buildImage builds the binary into dir and assembles the image, as
// make image does.
func buildImage(t *testing.T, dir string) v1.Image {
	t.Helper()
	bin := filepath.Join(dir, "brighter")
	if err := ociimage.BuildBinary(context.Background(), ociimage.BuildOptions{ModuleDir: "..", Out: bin, Arch: runtime.GOARCH,
		Version: testVersion, Revision: testRevision}); err != nil {
		t.Fatal(err)
	}
	img, err := ociimage.Build(ociimage.Options{Binary: bin, Arch: runtime.GOARCH, Created: testCreated, Version: testVersion,
		Revision: testRevision, Source: ociimage.DefaultSource, Licenses: "NOASSERTION"})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestImage_ReproducibleAndRunsFromDockerAndOCIArchives builds the image twice
// (same digest), writes it as a docker archive and an OCI layout, reads both
// back with go-containerregistry, checks the config, the labels and the one
// layer, extracts the filesystem and runs the binary from it: version, and lint
// on a subscriptions file where a ConfigMap would be mounted.
func TestImage_ReproducibleAndRunsFromDockerAndOCIArchives(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Fatalf("the image's binary runs on linux; this test runs it, so it needs linux (GOOS=%s)", runtime.GOOS)
	}
	tmp := t.TempDir()
	first := buildImage(t, mkdir(t, tmp, "build1"))
	second := buildImage(t, mkdir(t, tmp, "build2"))
	if a, b := digest(t, first), digest(t, second); a != b {
		t.Fatalf("two builds of one commit differ: %s and %s (not reproducible)", a, b)
	}
	want := digest(t, first)

	// make image (deploy/mkimage) builds the same image from the same inputs.
	mk := exec.Command("go", "run", "./deploy/mkimage", "-out", filepath.Join(tmp, "mkimage"), "-version", testVersion,
		"-revision", testRevision, "-epoch", strconv.FormatInt(testCreated.Unix(), 10), "-licenses", "NOASSERTION")
	mk.Dir = ".."
	mkOut, err := mk.CombinedOutput()
	if err != nil || !strings.Contains(string(mkOut), want.String()) {
		t.Errorf("go run ./deploy/mkimage: %v; want it to print digest %s:\n%s", err, want, mkOut)
	}
	if _, err := tarball.ImageFromPath(filepath.Join(tmp, "mkimage", "brighter-image.tar"), nil); err != nil {
		t.Errorf("mkimage's archive: %v", err)
	}

	// Written and read back: the docker archive under each tag, the layout.
	tags := ociimage.Tags(testVersion)
	if !slices.Equal(tags, []string{"brighter:latest", "brighter:" + testVersion}) {
		t.Errorf("tags %v", tags)
	}
	archive := filepath.Join(tmp, "brighter-image.tar")
	if err := ociimage.WriteTarball(archive, first, tags); err != nil {
		t.Fatal(err)
	}
	var img v1.Image
	for _, tg := range tags {
		got, err := tarball.ImageFromPath(archive, tag(t, tg))
		if err != nil {
			t.Fatalf("read %s from the archive: %v", tg, err)
		}
		// A docker archive keeps the config and the layers, not the OCI
		// manifest: docker load's image ID is the config digest.
		if a, b := configName(t, got), configName(t, first); a != b {
			t.Errorf("archive %s: config %s, want %s", tg, a, b)
		}
		img = got
	}
	layoutDir := filepath.Join(tmp, "oci")
	if err := ociimage.WriteLayout(layoutDir, first, tags); err != nil {
		t.Fatal(err)
	}
	lp, err := layout.FromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != want || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != tags[1] {
		t.Errorf("OCI layout index %+v, want one manifest %s named %s", im.Manifests, want, tags[1])
	}

	// The config.
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	switch {
	case c.User != ociimage.User || strings.HasPrefix(c.User, "0"):
		t.Errorf("User %q, want %s (non-root)", c.User, ociimage.User)
	case !slices.Equal(c.Entrypoint, []string{"brighter"}):
		t.Errorf("Entrypoint %q, want [brighter]", c.Entrypoint)
	case !slices.Equal(c.Cmd, []string{"consume"}):
		t.Errorf("Cmd %q, want [consume]", c.Cmd)
	case c.WorkingDir != path.Dir(ociimage.DefaultConfig) || ociimage.DefaultConfig != configPath:
		t.Errorf("WorkingDir %q: want the directory of %s, so the default --config brighter.yaml is that file", c.WorkingDir, configPath)
	case cf.OS != "linux" || cf.Architecture != runtime.GOARCH:
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	case !cf.Created.Time.Equal(testCreated):
		t.Errorf("created %v, want %v (SOURCE_DATE_EPOCH)", cf.Created.Time, testCreated)
	}
	if !slices.Contains(c.Env, "PATH=/usr/local/bin:/usr/bin:/bin") || path.Dir(ociimage.BinaryPath) != "/usr/local/bin" {
		t.Errorf("Env %q: PATH must find brighter in %s", c.Env, path.Dir(ociimage.BinaryPath))
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.source":   ociimage.DefaultSource,
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.revision": testRevision,
		"org.opencontainers.image.licenses": "NOASSERTION",
		"org.opencontainers.image.created":  "2023-11-14T22:13:20Z",
	} {
		if got := c.Labels[k]; got != v {
			t.Errorf("label %s = %q, want %q", k, got, v)
		}
	}
	if mt, _ := first.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s, want OCI", mt)
	}

	// One layer, every entry dated SOURCE_DATE_EPOCH, owned as listed.
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	root := mkdir(t, tmp, "rootfs")
	entries := extract(t, img, root)
	wantEntries := map[string]string{ // name -> mode uid
		"etc": "drwxr-xr-x 0", "etc/brighter": "drwxr-xr-x 0", "etc/passwd": "-rw-r--r-- 0", "etc/group": "-rw-r--r-- 0",
		"home": "drwxr-xr-x 0", "home/nonroot": "drwx------ 65532", "tmp": "dtrwxrwxrwx 0",
		"usr": "drwxr-xr-x 0", "usr/local": "drwxr-xr-x 0", "usr/local/bin": "drwxr-xr-x 0", "usr/local/bin/brighter": "-rwxr-xr-x 0",
	}
	for name, h := range entries {
		w, ok := wantEntries[name]
		if !ok {
			t.Errorf("unexpected entry %s in the layer", name)
			continue
		}
		if got := h.FileInfo().Mode().String() + " " + strconv.Itoa(h.Uid); got != w {
			t.Errorf("%s: %s, want %s", name, got, w)
		}
		if !h.ModTime.Equal(testCreated) {
			t.Errorf("%s: modified %v, want %v", name, h.ModTime, testCreated)
		}
	}
	if len(entries) != len(wantEntries) {
		t.Errorf("layer has %d entries, want %d", len(entries), len(wantEntries))
	}
	passwd, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if !strings.Contains(string(passwd), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user:\n%s", passwd)
	}

	// The binary: static, CGO off, trimmed, with the CA roots compiled in.
	bin := filepath.Join(root, ociimage.BinaryPath)
	checkStatic(t, bin)

	// It runs: version, then lint on a file where the ConfigMap is mounted,
	// from the image's working directory with lint's default path.
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("brighter version: %v", err)
	}
	var v struct{ Version, Revision string }
	if err := json.Unmarshal(out, &v); err != nil || v.Version != testVersion || v.Revision != testRevision {
		t.Errorf("brighter version -o json = %s (%v), want version %s revision %s", out, err, testVersion, testRevision)
	}
	wd := filepath.Join(root, c.WorkingDir)
	good, err := os.ReadFile("../examples/sqs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wd, "brighter.yaml"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	lint := exec.Command(bin, "lint")
	lint.Dir = wd
	if out, err := lint.CombinedOutput(); err != nil || !strings.Contains(string(out), "no findings") {
		t.Errorf("brighter lint in %s (mounted file): %v\n%s", c.WorkingDir, err, out)
	}
	// It read that file: a budget lint reports is reported.
	bad := strings.ReplaceAll(string(good), "requeueCount: 3 ", "requeueCount: 0 ")
	if bad == string(good) {
		t.Fatal("examples/sqs.yaml no longer has 'requeueCount: 3 '; update this test")
	}
	if err := os.WriteFile(filepath.Join(wd, "brighter.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	lint = exec.Command(bin, "lint", "--fail-on", "warning", ociimage.DefaultConfig[len(c.WorkingDir)+1:])
	lint.Dir = wd
	out, err = lint.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "requeueCount") {
		t.Errorf("brighter lint --fail-on warning on requeueCount 0: %v, want exit 1 naming requeueCount\n%s", err, out)
	}
}

// extract writes the image's filesystem under root (files and
// directories; nothing else is in it) and returns each entry's header.
func extract(t *testing.T, img v1.Image, root string) map[string]*tar.Header {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	out := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(h.Name, "/")] = h
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("entry %s escapes the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, h.FileInfo().Mode().Perm()|0o200)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("entry %s has type %c; the image holds only files and directories", h.Name, h.Typeflag)
		}
	}
}

// checkStatic checks the binary has no dynamic loader and was built with
// CGO off and -trimpath, with the fallback CA roots linked in.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a dynamic loader (PT_INTERP); it must be static")
		}
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("build settings CGO_ENABLED=%q -trimpath=%q, want 0 and true", settings["CGO_ENABLED"], settings["-trimpath"])
	}
	if !slices.ContainsFunc(bi.Deps, func(m *debug.Module) bool { return m.Path == "golang.org/x/crypto/x509roots/fallback" }) {
		t.Error("golang.org/x/crypto/x509roots/fallback is not linked in: TLS would fail on the empty base (no CA bundle)")
	}
}

// configName returns the digest of the image's config and its layers'
// diff IDs, joined.
func configName(t *testing.T, img v1.Image) string {
	t.Helper()
	cn, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	out := cn.String()
	for _, d := range cf.RootFS.DiffIDs {
		out += " " + d.String()
	}
	return out
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// tag parses a tag the way the archive stores it.
func tag(t *testing.T, s string) *name.Tag {
	t.Helper()
	tg, err := name.NewTag(s)
	if err != nil {
		t.Fatal(err)
	}
	return &tg
}

// Package ociimage builds brighter's container image without a Docker
// engine: a static brighter binary (CGO off, -trimpath) on an
// empty base in one layer, with a non-root user, ENTRYPOINT ["brighter"],
// CMD ["consume"], the working directory /etc/brighter (so every command's
// default --config, brighter.yaml, is /etc/brighter/brighter.yaml, where
// deploy/kubernetes mounts the subscriptions file) and the OCI labels
// source, version, revision, licenses and created. Every timestamp comes
// from Options.Created (SOURCE_DATE_EPOCH), so the same commit gives the
// same digest. CA certificates are compiled into the binary
// (golang.org/x/crypto/x509roots/fallback, linked into cmd/brighter), so
// the image carries no certificate bundle of its own.
//
// It is used by deploy/mkimage (make image) and the deploy tests.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
//
// Imported by: deploy/mkimage
package ociimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's layout and identity.
const (
	// UID and GID are the non-root user and group the image runs as
	// ("nonroot" in its /etc/passwd), the same numbers distroless uses.
	UID = 65532
	GID = 65532
	// User is the image config's User field.
	User = "65532:65532"
	// BinaryPath is where the binary lives; its directory is on PATH, so
	// the entrypoint names it as "brighter".
	BinaryPath = "/usr/local/bin/brighter"
	// WorkingDir is the image's working directory: the relative default
	// --config of consume, lint, dlq, send and watch (brighter.yaml)
	// resolves to DefaultConfig.
	WorkingDir = "/etc/brighter"
	// DefaultConfig is the subscriptions file the image reads by default.
	DefaultConfig = WorkingDir + "/brighter.yaml"
	// DefaultSource is the org.opencontainers.image.source label.
	DefaultSource = "https://github.com/brightergo/brighter"
	// Package is the main package built into the image.
	Package = "./cmd/brighter"
)

// The OCI annotation keys used as image labels.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelLicenses = "org.opencontainers.image.licenses"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
)

// Entrypoint and Cmd are the image's ENTRYPOINT and CMD.
var (
	Entrypoint = []string{"brighter"}
	Cmd        = []string{"consume"}
)

// Options describe one image.
type Options struct {
	// Binary is the path of a static linux binary of brighter for Arch.
	Binary string
	// Arch is the GOARCH the binary was built for (amd64, arm64).
	Arch string
	// Created is every timestamp in the image (config, history, file
	// modification times): SOURCE_DATE_EPOCH, usually the commit time.
	Created time.Time
	// Version, Revision, Source and Licenses are the OCI labels; Licenses
	// is an SPDX expression ("NOASSERTION" when the project declares none).
	Version, Revision, Source, Licenses string
}

// BuildOptions say how to build the binary.
type BuildOptions struct {
	// ModuleDir is the module root (where go.mod is).
	ModuleDir string
	// Out is the path of the binary to write.
	Out string
	// Arch is the GOARCH; GOOS is always linux.
	Arch string
	// Version and Revision are stamped with -ldflags -X main.version and
	// main.commit when not empty.
	Version, Revision string
}

// BuildBinary builds Package as a static, reproducible linux binary: CGO
// off, -trimpath, no build ID, symbol tables stripped. It returns the go
// command's output in the error when the build fails.
func BuildBinary(ctx context.Context, o BuildOptions) error {
	ldflags := []string{"-s", "-w", "-buildid="}
	if o.Version != "" {
		ldflags = append(ldflags, "-X", "main.version="+o.Version)
	}
	if o.Revision != "" {
		ldflags = append(ldflags, "-X", "main.commit="+o.Revision)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", strings.Join(ldflags, " "), "-o", o.Out, Package)
	cmd.Dir = o.ModuleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.Arch, "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s for linux/%s: %w\n%s", Package, o.Arch, err, out)
	}
	return nil
}

// Build assembles the image: an empty base plus one layer with the
// directories, /etc/passwd and /etc/group naming the non-root user, and
// the binary. It returns an error when the binary cannot be read or a
// label is missing.
func Build(o Options) (v1.Image, error) {
	if o.Version == "" || o.Source == "" || o.Licenses == "" || o.Arch == "" {
		return nil, fmt.Errorf("ociimage: version %q, source %q, licenses %q and arch %q are all required", o.Version, o.Source, o.Licenses, o.Arch)
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("ociimage: read binary: %w", err)
	}
	created := o.Created.UTC()
	layerTar, err := rootfs(bin, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("ociimage: layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: created}, CreatedBy: "ociimage: brighter " + o.Version, Comment: "static brighter binary, /etc/passwd, /etc/group"}})
	if err != nil {
		return nil, fmt.Errorf("ociimage: append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("ociimage: config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Created = v1.Time{Time: created}
	labels := map[string]string{
		LabelSource:   o.Source,
		LabelVersion:  o.Version,
		LabelLicenses: o.Licenses,
		LabelCreated:  created.Format(time.RFC3339),
		LabelTitle:    "brighter",
	}
	if o.Revision != "" {
		labels[LabelRevision] = o.Revision
	}
	cf.Config = v1.Config{
		User:       User,
		Entrypoint: Entrypoint,
		Cmd:        Cmd,
		WorkingDir: WorkingDir,
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/nonroot"},
		Labels:     labels,
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("ociimage: set config: %w", err)
	}
	return img, nil
}

// rootfs returns the layer's uncompressed tar: every entry owned by root
// except the user's home, every time set to created.
func rootfs(bin []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := func(name string, typ byte, mode int64, size int, uid int) *tar.Header {
		return &tar.Header{Name: name, Typeflag: typ, Mode: mode, Size: int64(size), Uid: uid, Gid: uid,
			ModTime: created, Format: tar.FormatPAX}
	}
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(hdr(name+"/", tar.TypeDir, mode, 0, uid))
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(hdr(name, tar.TypeReg, mode, len(data), 0)); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", UID, GID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", GID)
	steps := []func() error{
		func() error { return dir("etc", 0o755, 0) },
		func() error { return dir(strings.TrimPrefix(WorkingDir, "/"), 0o755, 0) },
		func() error { return file("etc/group", 0o644, []byte(group)) },
		func() error { return file("etc/passwd", 0o644, []byte(passwd)) },
		func() error { return dir("home", 0o755, 0) },
		func() error { return dir("home/nonroot", 0o700, UID) },
		func() error { return dir("tmp", 0o1777, 0) },
		func() error { return dir("usr", 0o755, 0) },
		func() error { return dir("usr/local", 0o755, 0) },
		func() error { return dir(strings.TrimPrefix(filepath.Dir(BinaryPath), "/"), 0o755, 0) },
		func() error { return file(strings.TrimPrefix(BinaryPath, "/"), 0o755, bin) },
		tw.Close,
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, fmt.Errorf("ociimage: layer tar: %w", err)
		}
	}
	return buf.Bytes(), nil
}

// tagText is what a Docker tag may hold.
var tagText = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// Tags returns the image's references: brighter:latest and
// brighter:<version>, the version made a valid tag (v1.2.3+dirty becomes
// v1.2.3-dirty; a leading '.' or '-' and anything past 128 characters go).
func Tags(version string) []string {
	tag := strings.TrimLeft(tagText.ReplaceAllString(version, "-"), ".-")
	if len(tag) > 128 {
		tag = tag[:128]
	}
	out := []string{"brighter:latest"}
	if tag != "" && tag != "latest" {
		out = append(out, "brighter:"+tag)
	}
	return out
}

// WriteTarball writes img as a `docker save` archive (what docker load,
// podman load and kind load image-archive read) tagged with tags.
func WriteTarball(path string, img v1.Image, tags []string) error {
	refs := map[name.Reference]v1.Image{}
	for _, t := range tags {
		ref, err := name.NewTag(t, name.WithDefaultRegistry(name.DefaultRegistry))
		if err != nil {
			return fmt.Errorf("ociimage: tag %q: %w", t, err)
		}
		refs[ref] = img
	}
	if err := tarball.MultiRefWriteToFile(path, refs); err != nil {
		return fmt.Errorf("ociimage: write %s: %w", path, err)
	}
	return nil
}

// WriteLayout writes img as a fresh OCI image layout in dir (removed
// first), annotated with its first tag, for skopeo, crane or oras.
func WriteLayout(dir string, img v1.Image, tags []string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("ociimage: layout %s: %w", dir, err)
	}
	var opts []layout.Option
	if len(tags) > 0 {
		opts = append(opts, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tags[len(tags)-1]}))
	}
	if err := p.AppendImage(img, opts...); err != nil {
		return fmt.Errorf("ociimage: layout %s: %w", dir, err)
	}
	return nil
}

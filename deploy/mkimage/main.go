// Command mkimage builds brighter's container image without a Docker engine
// (`make image`): it builds a static linux binary of ./cmd/brighter
// and assembles the image with internal/ociimage, then writes
//
//	<out>/brighter-image.tar  a `docker save` archive for docker load, podman load, kind load image-archive
//	<out>/brighter-oci/       an OCI image layout for skopeo, crane or oras
//
// and prints the image digest. The same commit and -epoch give the same
// digest.
//
// Run it from the module root: go run ./deploy/mkimage -out bin -version v1.2.3 -epoch 1700000000
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/brightergo/brighter/internal/ociimage"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mkimage", flag.ContinueOnError)
	out := fs.String("out", "bin", "directory to write brighter-image.tar and brighter-oci/ to")
	version := fs.String("version", "devel", "version label and brighter version (git describe)")
	revision := fs.String("revision", "", "revision label and brighter version's commit (git rev-parse HEAD)")
	source := fs.String("source", ociimage.DefaultSource, "source label")
	licenses := fs.String("licenses", "NOASSERTION", "licenses label (an SPDX expression)")
	epoch := fs.String("epoch", os.Getenv("SOURCE_DATE_EPOCH"), "every timestamp in the image, Unix seconds (default $SOURCE_DATE_EPOCH, else 0)")
	arch := fs.String("arch", runtime.GOARCH, "GOARCH of the image")
	if err := fs.Parse(args); err != nil {
		return err
	}
	created := time.Unix(0, 0).UTC()
	if *epoch != "" {
		s, err := strconv.ParseInt(*epoch, 10, 64)
		if err != nil || s < 0 {
			return fmt.Errorf("-epoch %q: want Unix seconds", *epoch)
		}
		created = time.Unix(s, 0).UTC()
	}
	moduleDir, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(moduleDir, "go.mod")); err != nil {
		return fmt.Errorf("run from the module root: %w", err)
	}
	tmp, err := os.MkdirTemp("", "mkimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "brighter")
	if err := ociimage.BuildBinary(ctx, ociimage.BuildOptions{ModuleDir: moduleDir, Out: bin, Arch: *arch, Version: *version, Revision: *revision}); err != nil {
		return err
	}
	img, err := ociimage.Build(ociimage.Options{Binary: bin, Arch: *arch, Created: created, Version: *version, Revision: *revision, Source: *source, Licenses: *licenses})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	tags := ociimage.Tags(*version)
	tarPath := filepath.Join(*out, "brighter-image.tar")
	if err := ociimage.WriteTarball(tarPath, img, tags); err != nil {
		return err
	}
	if err := ociimage.WriteLayout(filepath.Join(*out, "brighter-oci"), img, tags); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %v %s\n", tarPath, tags, digest)
	return nil
}

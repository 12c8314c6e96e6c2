package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/export"
)

// make build, make image and release builds set these with -ldflags, for
// example
//
//	go build -ldflags "-X main.version=$(git describe --tags --always --dirty) -X main.commit=$(git rev-parse HEAD)" ./cmd/brighter
//
// Empty values are taken from the build info the Go toolchain embeds: the
// module version of `go install github.com/brightergo/brighter/cmd/brighter@v1.2.3`,
// and the pseudo-version, VCS revision, time and modified flag of a `go
// build` from a checkout with VCS stamping on (docs/commands/version.md).
var (
	version = ""
	commit  = ""
)

// versionInfo is what `brighter version` reports.
type versionInfo struct {
	// Version is the -ldflags version (git describe: v1.2.3, v1.2.3-4-gabcdef0,
	// abcdef0-dirty), the module version of a `go install ...@version`, the
	// pseudo-version Go stamps on a `go build` from a checkout
	// (v0.0.0-20261204065322-abcdef012345+dirty), or "(devel)" when Go
	// stamped nothing.
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from; "" when unknown.
	Revision string `json:"revision,omitempty"`
	// Time is the commit time (RFC 3339); "" when unknown.
	Time string `json:"time,omitempty"`
	// Modified reports a build from a checkout with uncommitted changes (the
	// vcs.modified setting, or an -ldflags version ending in -dirty).
	Modified bool `json:"modified"`
	// GoVersion is the Go toolchain that built the binary (go1.26.8).
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// readVersion builds the version from the ldflags overrides and the build
// info (bi may be nil: no build info).
func readVersion(bi *debug.BuildInfo, ldVersion, ldCommit string) versionInfo {
	v := versionInfo{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			v.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if ldVersion != "" {
		v.Version = ldVersion
		v.Modified = v.Modified || strings.HasSuffix(ldVersion, "-dirty")
	}
	if ldCommit != "" {
		v.Revision = ldCommit
	}
	return v
}

// currentVersion is this binary's version.
func currentVersion() versionInfo {
	bi, _ := debug.ReadBuildInfo()
	return readVersion(bi, version, commit)
}

// String is the one-line form: "brighter v1.2.3 (commit 0123abc, modified, go1.26.8 linux/amd64)".
func (v versionInfo) String() string {
	var details []string
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		details = append(details, "commit "+rev)
	}
	if v.Modified {
		details = append(details, "modified")
	}
	details = append(details, v.GoVersion+" "+v.Platform)
	return fmt.Sprintf("brighter %s (%s)", v.Version, strings.Join(details, ", "))
}

func newVersionCmd(io *IOStreams) *cobra.Command {
	output := export.Default
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print brighter's version, commit and Go version",
		Long: `Print the version of this binary: the release or module version, the commit
it was built from (and whether the checkout had uncommitted changes), and the
Go toolchain and platform.`,
		Example: `  brighter version
  brighter version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := parseOutput(versionFormats, &output); err != nil {
				return err
			}
			v := currentVersion()
			if output == export.JSON {
				if err := export.WriteJSON(io.Out, v); err != nil {
					return failureErr(err)
				}
				return nil
			}
			fmt.Fprintln(io.Out, v)
			return nil
		},
	}
	addOutputFlag(cmd, &output, versionFormats, "")
	return cmd
}

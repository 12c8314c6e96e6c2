package cmdutil

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// VersionInfo is what `brighter version` reports.
type VersionInfo struct {
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

// ReadVersion builds the version from the ldflags overrides and the build
// info (bi may be nil: no build info).
func ReadVersion(bi *debug.BuildInfo, ldVersion, ldCommit string) VersionInfo {
	v := VersionInfo{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
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

// CurrentVersion is this binary's version: ReadVersion of the build info
// the Go toolchain embedded and the -ldflags values ldVersion and ldCommit
// (main sets them; "" when the build did not).
func CurrentVersion(ldVersion, ldCommit string) VersionInfo {
	bi, _ := debug.ReadBuildInfo()
	return ReadVersion(bi, ldVersion, ldCommit)
}

// String is the one-line form: "brighter v1.2.3 (commit 0123abc, modified, go1.26.8 linux/amd64)".
func (v VersionInfo) String() string {
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

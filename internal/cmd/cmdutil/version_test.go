package cmdutil

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionFromBuildInfo: the module version of a `go install ...@vX`,
// the VCS revision, time and modified flag come from the build info; the
// ldflags values win over it.
func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Path: "github.com/brightergo/brighter", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			{Key: "vcs.time", Value: "2026-11-30T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	v := ReadVersion(bi, "", "")
	if v.Version != "v1.4.0" || v.Revision != "0123456789abcdef0123" || !v.Modified || v.GoVersion != "go1.99.1" || v.Time != "2026-11-30T10:00:00Z" {
		t.Fatalf("readVersion = %+v", v)
	}
	if s := v.String(); !strings.HasPrefix(s, "brighter v1.4.0 (commit 0123456789ab, modified, go1.99.1 ") {
		t.Fatalf("String() = %q", s)
	}
	v = ReadVersion(bi, "v2.0.0", "feedface")
	if v.Version != "v2.0.0" || v.Revision != "feedface" {
		t.Fatalf("ldflags did not win: %+v", v)
	}
	// make build with uncommitted changes: git describe --dirty says so.
	if v = ReadVersion(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "abcdef0-dirty", "feedface"); !v.Modified || v.Version != "abcdef0-dirty" {
		t.Fatalf("a -dirty ldflags version is modified: %+v", v)
	}
	v = ReadVersion(nil, "", "")
	if v.Version != "(devel)" || v.Revision != "" || v.Modified {
		t.Fatalf("no build info: %+v", v)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadEvents_NamesEveryFailure: a failed test, a failed subtest
// and a package that died of the test timeout are each reported by name;
// passing tests are counted and timed.
func TestReadEvents_NamesEveryFailure(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"pass","Package":"p/a","Test":"TestOK","Elapsed":1.5}`,
		`{"Action":"fail","Package":"p/a","Test":"TestRows/reactor","Elapsed":0.5}`,
		`{"Action":"fail","Package":"p/a","Test":"TestRows","Elapsed":0.6}`,
		`{"Action":"fail","Package":"p/a","Elapsed":3}`,
		`# p/b build failed`,
		`{"Action":"output","Package":"p/c","Test":"TestHang","Output":"panic: test timed out after 20m0s\n"}`,
		`{"Action":"fail","Package":"p/c","Elapsed":1200}`,
		`{"Action":"pass","Package":"p/d","Elapsed":0.2}`,
	}, "\n")
	r, err := readEvents(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p/a TestRows/reactor", "p/c (package: panic: test timed out after 20m0s)"}
	if strings.Join(r.failed, "|") != strings.Join(want, "|") {
		t.Fatalf("failed = %q, want %q", r.failed, want)
	}
	if r.tests != 3 || len(r.packages) != 3 || len(r.slow) != 2 || r.slow[1].name != "p/a TestRows/reactor" {
		t.Fatalf("tests %d, packages %v, top-level tests %v", r.tests, r.packages, r.slow)
	}
	var b strings.Builder
	r.printTimes(&b, 1)
	if !strings.Contains(b.String(), "| c | 20m0s |") || !strings.Contains(b.String(), "| a TestOK | 1.5s |") || strings.Contains(b.String(), "TestRows |") ||
		!strings.Contains(b.String(), "- FAIL a TestRows/reactor") {
		t.Fatalf("times:\n%s", b.String())
	}
}

// TestRun_ReportsFailuresAcrossRuns runs a tiny module's tests
// twice beside a small hog: the failing test is named with both runs, the
// exit status is 1 and each run's events are saved.
func TestRun_ReportsFailuresAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":    "module example.com/x\n\ngo 1.22\n",
		"x_test.go": "package x\n\nimport \"testing\"\n\nfunc TestGood(t *testing.T) {}\n\nfunc TestBad(t *testing.T) { t.Fatal(\"always\") }\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	var out, errOut strings.Builder
	code := run([]string{"-runs", "2", "-hog", "0.5", "-out", "stress", "--", "-count=1", "."}, &out, &errOut)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "example.com/x TestBad (runs [1 2])") || strings.Contains(out.String(), "TestGood") {
		t.Fatalf("stdout:\n%s", out.String())
	}
	for _, f := range []string{"run-1.json", "run-2.json"} {
		if b, err := os.ReadFile(filepath.Join(dir, "stress", f)); err != nil || !strings.Contains(string(b), `"Test":"TestBad"`) {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if code := run([]string{"-runs", "0", "--", "."}, &out, &errOut); code != 2 {
		t.Fatalf("-runs 0: exit %d, want 2", code)
	}
}

package execfile_test

import (
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/execfile"
)

// TestLook_TheCommandAndItsInterpreter: a command the kernel can start is
// found (a binary, a script whose #! interpreter exists, directly or on
// the PATH given through env); one it cannot start is refused with the
// file that fails and why: the command missing or not executable, a #!
// interpreter missing, not executable or a directory, an env-style name on
// no directory of the PATH, a text file or an empty file with no #! line.
func TestLook_TheCommandAndItsInterpreter(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("bin/tool", "#!/bin/sh\nexit 0\n", 0o755)
	write("plain", "#!/bin/sh\n", 0o644)
	sh, err := os.Readlink("/proc/self/exe") // an ELF binary that surely runs
	if err != nil {
		t.Fatalf("read /proc/self/exe (this test runs on Linux, as CI does): %v", err)
	}
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		path          string // the PATH the command runs with ("" = the process's)
		want          string // "" when it can be started
	}{
		{name: "a script of /bin/sh", content: "#!/bin/sh\necho\n", mode: 0o755},
		{name: "a #! line with spaces and an argument", content: "#!  /bin/sh -e\n", mode: 0o755},
		{name: "an env-style interpreter on PATH", content: "#!/usr/bin/env sh\n", mode: 0o755},
		{name: "an env-style interpreter on the command's own PATH", content: "#!/usr/bin/env -S tool -x\n", mode: 0o755, path: bin},
		{name: "a missing interpreter", content: "#!/usr/bin/python9\nprint(1)\n", mode: 0o755,
			want: `its #! line names interpreter "/usr/bin/python9": no such file or directory`},
		{name: "an interpreter that is not executable", content: "#!" + filepath.Join(dir, "plain") + "\n", mode: 0o755,
			want: `its #! line names interpreter "` + filepath.Join(dir, "plain") + `": permission denied (not executable)`},
		{name: "an interpreter that is a directory", content: "#!" + bin + "\n", mode: 0o755,
			want: `its #! line names interpreter "` + bin + `": is a directory`},
		{name: "an env-style name on no directory of PATH", content: "#!/usr/bin/env python9\n", mode: 0o755,
			want: `its #! line runs "python9" through /usr/bin/env: no executable file of that name on PATH`},
		{name: "an env-style name missing from the command's own PATH", content: "#!/usr/bin/env sh\n", mode: 0o755, path: bin,
			want: `its #! line runs "sh" through /usr/bin/env: no executable file of that name on PATH`},
		{name: "a #! line with no interpreter", content: "#!\n", mode: 0o755, want: "its #! line names no interpreter"},
		{name: "a text file with no #! line", content: "echo hi\n", mode: 0o755, want: "it is a text file with no #! line"},
		{name: "an empty file", content: "", mode: 0o755, want: "it is empty"},
		{name: "not executable", content: "#!/bin/sh\n", mode: 0o644, want: "permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write("cmd", tc.content, tc.mode)
			if err := os.Chmod(p, tc.mode); err != nil {
				t.Fatal(err)
			}
			got, err := execfile.Look(p, tc.path)
			if tc.want == "" {
				if err != nil || got != p {
					t.Fatalf("Look = %q, %v; want %q, nil", got, err, p)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Look error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if got, err := execfile.Look(sh, ""); err != nil || got != sh {
		t.Errorf("an ELF binary: Look = %q, %v", got, err)
	}
	if _, err := execfile.Look(filepath.Join(dir, "nosuch"), ""); err == nil || err.Error() != "no such file or directory" {
		t.Errorf("a missing command: %v", err)
	}
	if _, err := execfile.Look("brighter-no-such-command", ""); !errors.Is(err, execfile.ErrNotFound) {
		t.Errorf("a bare name on no directory of PATH: %v, want ErrNotFound", err)
	}
}

// TestLook_ELFLoader: a dynamically linked program whose loader
// (PT_INTERP) is missing, a binary built for another C library, is refused,
// naming the loader; the same program with its loader present is found.
func TestLook_ELFLoader(t *testing.T) {
	src := ""
	for _, p := range []string{"/bin/sh", "/usr/bin/env", "/bin/ls"} {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			if f, err := elf.Open(r); err == nil {
				for _, pr := range f.Progs {
					if pr.Type == elf.PT_INTERP {
						src = r
					}
				}
				f.Close()
			}
		}
		if src != "" {
			break
		}
	}
	if src == "" {
		t.Fatal("no dynamically linked program among the system's own (/bin/sh, /usr/bin/env...): the loader check would go untested")
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	var off, size uint64
	for _, pr := range f.Progs {
		if pr.Type == elf.PT_INTERP {
			off, size = pr.Off, pr.Filesz
		}
	}
	f.Close()
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := execfile.Look(good, ""); err != nil {
		t.Fatalf("a program whose loader is there: %v", err)
	}
	// The loader's path with its last byte changed names no file.
	loader := strings.TrimRight(string(data[off:off+size]), "\x00")
	broken := append([]byte(nil), data...)
	broken[off+uint64(len(loader))-1] = 'Q'
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, broken, 0o755); err != nil {
		t.Fatal(err)
	}
	want := `it is a dynamically linked program whose loader "` + loader[:len(loader)-1] + `Q" is missing: no such file or directory`
	if _, err := execfile.Look(bad, ""); err == nil || err.Error() != want {
		t.Fatalf("Look error %v, want %q", err, want)
	}
}

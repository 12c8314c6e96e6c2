// Package execfile finds the program an exec handler runs and checks that
// the kernel can start it: the command itself (a path, or a bare name on
// PATH, as exec.LookPath finds it) and, for a script, the interpreter its
// #! line names (an absolute path, or with #!/usr/bin/env NAME the NAME on
// PATH). The exec handler resolves its command with it when consume starts
// the subscription, and lint checks with it that consume could, so the two
// cannot disagree.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
package execfile

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth is how many #! interpreters, one naming the next, are followed:
// Linux starts at most four levels (BINPRM_MAX_RECURSION).
const maxDepth = 4

// headLen is how much of a file is read to judge it: Linux reads at most
// 256 bytes of a #! line (BINPRM_BUF_SIZE).
const headLen = 256

// ErrNotFound is wrapped by Look's error for a bare command name found in
// no directory of PATH.
var ErrNotFound = errors.New("no executable file of that name on PATH")

// Look returns the path of command, found as exec.LookPath finds it (a
// name with a slash is a path, relative to the working directory; a bare
// name is looked up on the process's PATH), once it has checked that the
// kernel can start it: an executable file which, when it begins with a #!
// line, names an interpreter that can be started in turn (an absolute or
// relative path to an executable file; with #!/usr/bin/env NAME, NAME on
// path, the PATH the command will run with, or the process's own when path
// is ""). A file of text with no #! line is refused too (the kernel cannot
// start it: exec format error), and so is a dynamically linked ELF program
// whose loader (PT_INTERP) is missing. The error says which file fails and why,
// in words that do not repeat command: "no such file or directory",
// `its #! line names interpreter "/usr/bin/python9": no such file or
// directory`.
func Look(command, path string) (string, error) {
	resolved, err := exec.LookPath(command)
	if err != nil {
		if e := (*exec.Error)(nil); errors.As(err, &e) {
			if errors.Is(e.Err, exec.ErrNotFound) {
				return "", ErrNotFound
			}
			return "", pathless(e.Err)
		}
		return "", pathless(err)
	}
	if err := startable(resolved, path, 0); err != nil {
		return "", err
	}
	return resolved, nil
}

// startable checks the #! line of file (an executable file) at depth.
func startable(file, path string, depth int) error {
	head, err := readHead(file)
	if err != nil {
		// exec.LookPath found an executable file; a file that cannot be
		// read (execute permission only) is left to the kernel.
		return nil
	}
	if len(head) == 0 {
		return errors.New("it is empty, which the kernel cannot start (exec format error)")
	}
	if bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		return elfInterpreter(file)
	}
	line, ok := bytes.CutPrefix(head, []byte("#!"))
	if !ok {
		if looksLikeText(head) {
			return errors.New("it is a text file with no #! line, which the kernel cannot start (exec format error); begin it with a line such as #!/bin/sh")
		}
		return nil
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	interp, arg := splitShebang(string(line))
	if interp == "" {
		return errors.New("its #! line names no interpreter")
	}
	if depth+1 >= maxDepth {
		return fmt.Errorf("its #! line names interpreter %s, and #! lines nest more than %d deep", strconv.Quote(interp), maxDepth)
	}
	if err := executable(interp); err != nil {
		return fmt.Errorf("its #! line names interpreter %s: %w", strconv.Quote(interp), err)
	}
	if err := startable(interp, path, depth+1); err != nil {
		return fmt.Errorf("its #! line names interpreter %s: %w", strconv.Quote(interp), err)
	}
	if filepath.Base(interp) != "env" {
		return nil
	}
	name := envProgram(arg)
	if name == "" {
		return nil
	}
	found, err := lookIn(name, path)
	if err != nil {
		return fmt.Errorf("its #! line runs %s through %s: %w", strconv.Quote(name), interp, err)
	}
	if err := startable(found, path, depth+1); err != nil {
		return fmt.Errorf("its #! line runs %s (%s): %w", strconv.Quote(name), found, err)
	}
	return nil
}

// elfInterpreter checks the program interpreter a dynamically linked ELF
// file names (its PT_INTERP, the dynamic loader such as
// /lib/ld-musl-x86_64.so.1): the kernel starts the loader, and a missing one
// fails the start with "no such file or directory" (a binary built for
// another C library or distribution). A file debug/elf cannot read is left
// to the kernel.
func elfInterpreter(file string) error {
	f, err := elf.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, min(p.Filesz, 4096))
		if _, err := p.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
			return nil
		}
		interp := string(bytes.TrimRight(b, "\x00"))
		if interp == "" {
			return nil
		}
		st, err := os.Stat(interp)
		if err != nil {
			return fmt.Errorf("it is a dynamically linked program whose loader %s is missing: %w", strconv.Quote(interp), pathless(err))
		}
		if st.IsDir() {
			return fmt.Errorf("it is a dynamically linked program whose loader %s is a directory", strconv.Quote(interp))
		}
		return nil
	}
	return nil
}

// splitShebang splits a #! line as Linux does: the interpreter up to the
// first space or tab, and the rest, trimmed, as one argument.
func splitShebang(line string) (interp, arg string) {
	line = strings.TrimRight(strings.TrimLeft(line, " \t"), " \t\r")
	interp, arg, _ = strings.Cut(strings.ReplaceAll(line, "\t", " "), " ")
	return interp, strings.TrimSpace(arg)
}

// envProgram is the program env(1) runs for the argument of a #! line
// naming env: the first word that is neither an option (-S, -i, -u NAME)
// nor a NAME=value assignment; "" when there is none or when the options
// are beyond this reading (-u and -C take an argument).
func envProgram(arg string) string {
	words := strings.Fields(arg)
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-u" || w == "-C" || w == "--unset" || w == "--chdir":
			i++
		case strings.HasPrefix(w, "-"):
		case strings.Contains(w, "="):
		default:
			return w
		}
	}
	return ""
}

// lookIn finds name as env(1) does: a name with a slash as a path, else in
// the directories of path (the process's PATH when path is "").
func lookIn(name, path string) (string, error) {
	if strings.ContainsRune(name, '/') {
		if err := executable(name); err != nil {
			return "", err
		}
		return name, nil
	}
	if path == "" {
		path = os.Getenv("PATH")
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", ErrNotFound
}

// executable checks that p names an executable regular file.
func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return pathless(err)
	}
	if st.IsDir() {
		return errors.New("is a directory")
	}
	if st.Mode()&0o111 == 0 {
		return errors.New("permission denied (not executable)")
	}
	return nil
}

// readHead reads the first headLen bytes of file.
func readHead(file string) ([]byte, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	buf := make([]byte, headLen)
	n, err := io.ReadFull(fh, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}

// looksLikeText reports whether head is the start of a text file: valid
// UTF-8 (a rune cut at the end aside) with no NUL and no ELF magic.
func looksLikeText(head []byte) bool {
	if bytes.HasPrefix(head, []byte("\x7fELF")) || bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	for len(head) > 0 {
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size <= 1 {
			return len(head) < utf8.UTFMax && !utf8.FullRune(head)
		}
		head = head[size:]
	}
	return true
}

// pathless is err without the path an fs.PathError names (the caller
// quotes it already): "no such file or directory", "permission denied".
func pathless(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

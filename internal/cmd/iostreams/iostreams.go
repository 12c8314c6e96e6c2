// Package iostreams is a command's input, output and error streams with
// their terminal and colour facts, as gh's iostreams is: production wires
// the process's own (System), a test wires buffers.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/redact
//
// Must not import: github.com/spf13/cobra, internal/transport
package iostreams

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/brightergo/brighter/internal/redact"
)

// IOStreams carries a command's input, output and error streams with their
// terminal and colour facts, as gh's iostreams does, so commands can be run
// from tests with buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutTTY and InTTY report whether stdout / stdin are terminals.
	OutTTY, InTTY bool
	// Color is true when stdout is a terminal and NO_COLOR is not set.
	Color bool
	// Getenv reads the environment (os.LookupEnv in production).
	Getenv func(string) (string, bool)
	// Redactor hides secrets in every log line, event and error the run
	// writes; the root's Run sets it when nil, and a command that reads a
	// subscriptions file adds the file's secrets (config.File.Secrets).
	Redactor *redact.Redactor
	// WrapFile, when set, is put between the files whose writes must be
	// durable before messages are removed (dlq archive's --file, the
	// replay journal) and their writes and fsyncs: a test injects a failing
	// write or fsync there. nil (production) writes to the file itself.
	WrapFile func(f *os.File) SyncFile
}

// SyncFile is the part of an *os.File that dlq archive's --file and the
// replay journal write through: Write, and Sync (an fsync).
type SyncFile interface {
	Write(p []byte) (int, error)
	Sync() error
}

// SyncFileOf is f as the durable writers write to it: WrapFile(f) when set,
// else f.
func (s *IOStreams) SyncFileOf(f *os.File) SyncFile {
	if s.WrapFile != nil {
		return s.WrapFile(f)
	}
	return f
}

// System returns the process's own streams: stdin, stdout and stderr, with
// the terminal facts of stdin and stdout, colour unless NO_COLOR is set,
// and os.LookupEnv.
func System() *IOStreams {
	outTTY := isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd())
	_, noColor := os.LookupEnv("NO_COLOR")
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: outTTY, InTTY: isatty.IsTerminal(os.Stdin.Fd()),
		Color:  outTTY && !noColor,
		Getenv: os.LookupEnv,
	}
}

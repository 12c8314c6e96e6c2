// Package local holds the lint rules judged on the local file system: what
// `brighter consume` opens or runs when it starts a subscription, looked up
// the way consume looks it up, so that lint refuses a file consume would
// refuse (exit 2) for a file it names. handler-command-not-found: an exec
// handler's command that internal/execfile's Look refuses, as
// internal/handler's Exec does (the command, or its #! interpreter); handler-tls-unreadable: an http handler's tls files that
// internal/tlsfiles cannot load (as the http handler loads them); memory-seed-invalid: a memory transport's seed file that cannot
// be opened or that the memory broker does not load (internal/transport's
// Memory.Open); memory-output-unwritable: a memory transport's output
// file that memory.CheckOutput finds cannot be written (as Memory.Open
// checks it). The subscriptions file's relative paths are already
// relative to its directory (internal/config resolves them as consume
// uses them).
//
// Its checks read files where lint runs and with its PATH, so they are
// kept out of internal/lint and internal/lint/rules, which judge the
// subscriptions file alone.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/pump, github.com/spf13/cobra
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/execfile"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/tlsfiles"
)

// Check returns the findings of f's subscriptions on the local file
// system: handler-command-not-found, handler-tls-unreadable,
// memory-seed-invalid and memory-output-unwritable, in file order. A nil f yields none. It reads each seed file whole (into a memory
// broker of its own, as consume loads it) and runs no command.
func Check(ctx context.Context, f *config.File) []lint.Finding {
	if f == nil {
		return nil
	}
	var out []lint.Finding
	for _, s := range f.Subscriptions {
		if h := s.Handler; h.Type == config.HandlerExec && h.Command != "" {
			if err := commandError(h.Command, h.Env["PATH"]); err != nil {
				out = append(out, lint.NewFinding(s, lint.RuleHandlerCommandNotFound, "handler.command", fmt.Sprintf(
					"subscription %q: handler.command %q cannot be run: %v; consume refuses to start the subscription (a relative path is relative to the subscriptions file's directory)",
					s.Name, h.Command, err)))
			}
		}
		if h := s.Handler; h.Type == config.HandlerHTTP && h.TLS != nil {
			files := tlsfiles.Files{CAFile: h.TLS.CAFile, CertFile: h.TLS.CertFile, KeyFile: h.TLS.KeyFile}
			if _, err := files.ClientConfig(); err != nil {
				out = append(out, lint.NewFinding(s, lint.RuleHandlerTLSUnreadable, "handler.tls", fmt.Sprintf(
					"subscription %q: %v; consume refuses to start the subscription (a relative path is relative to the subscriptions file's directory)",
					s.Name, err)))
			}
		}
		if s.Memory != nil && s.Memory.Seed != "" {
			if err := seedError(ctx, s.Memory.Seed, s.ChannelName); err != nil {
				out = append(out, lint.NewFinding(s, lint.RuleMemorySeedInvalid, "memory.seed", fmt.Sprintf(
					"subscription %q: memory.seed %q: %v; consume refuses to start the subscription",
					s.Name, s.Memory.Seed, err)))
			}
		}
		if s.Memory != nil && s.Memory.Output != "" {
			if err := memory.CheckOutput(s.Memory.Output); err != nil {
				out = append(out, lint.NewFinding(s, lint.RuleMemoryOutputUnwritable, "memory.output", fmt.Sprintf(
					"subscription %q: memory.output %q: %v; consume refuses to start the subscription (it writes the messages left at stop there)",
					s.Name, s.Memory.Output, err)))
			}
		}
	}
	return out
}

// commandError is why consume could not start command (execfile.Look's
// error, as internal/handler's Exec gets it: the command, or the
// interpreter its #! line names, with #!/usr/bin/env NAME looked up on
// path, the PATH handler.env gives the command, else lint's), or nil.
func commandError(command, path string) error {
	_, err := execfile.Look(command, path)
	return err
}

// pathless is err without the path an fs.PathError names (the finding
// quotes it already): "no such file or directory", "permission denied".
func pathless(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// seedError is why consume could not load the seed file at path into
// queue (its open's error, or the memory broker's Load's, which names the
// line), or nil.
func seedError(ctx context.Context, path, queue string) error {
	fh, err := os.Open(path)
	if err != nil {
		return pathless(err)
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		return errors.New("is a directory, not a file of messages")
	}
	_, err = memory.NewBroker(false).Load(ctx, fh, queue)
	return err
}

// Package root is the root command, brighter: its global flags
// (--log-format, --log-level), the tree of commands it assembles (each
// command a package of internal/cmd, built from the one factory.Factory
// main made), the refusal of unknown subcommands, and Run, which executes a
// command line and turns its error into the exit code and the final error
// line on stderr.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: cmd/...
package root

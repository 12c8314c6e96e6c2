// Package layers holds no code of the program: its tests are the
// repository-wide checks. layers_test.go enforces the table of
// ARCHITECTURE.md#layers, the one statement of what each package may depend
// on: every package of the module depends only on lower layers (cmd ->
// inspect, lint, tui, handler, ... -> pump -> broker -> message; a transport
// under internal/broker never reaches the pump, the pump never reaches a
// transport).
//
// claims_test.go checks every package comment against the code: each points
// to ARCHITECTURE.md#layers, and states what the package depends on only in
// paragraphs of this form, which it checks (anywhere else, prose about
// imports is an error):
//
//	Imports: internal/broker, internal/message
//	Must not import: internal/pump, cmd/..., github.com/spf13/cobra
//	Imported by: none
//
// Imports is every package of this module the package's non-test code
// imports (none: no package of the module); Must not import names packages
// that must not be among its dependencies, transitively; Imported by is every
// package of the module whose non-test code imports it (none: only tests).
// An entry is a path relative to the module, a subtree (cmd/...), or in Must
// not import a full import path outside the module.
//
// docs_test.go checks that the repository carries its
// own design: every requirement id cited is defined in docs/requirements.md,
// and no file cites a document outside the repository. sections_test.go
// checks that every section sign names a numbered section of a document the
// repository has. issues_test.go checks that no Go file and no Markdown
// document cites an issue number, or wears one as a row or test id, which a
// clone has no tracker for.
package layers

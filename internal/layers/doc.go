// Package layers holds no code of the program: its tests are the
// repository-wide checks. layers_test.go checks that every package of the
// module imports only downward, in the layers ARCHITECTURE.md draws (cmd ->
// inspect, lint, tui, handler, ... -> pump -> broker -> message; a transport
// under internal/broker never imports the pump, the pump never imports a
// transport; issue 17). docs_test.go checks that the repository carries its
// own design: every requirement id cited is defined in docs/requirements.md,
// and no file cites a document outside the repository.
package layers

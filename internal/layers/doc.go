// Package layers holds no code of the program: its test checks that every
// package of the module imports only downward, in the layers DESIGN.md
// draws (cmd -> inspect, lint, tui, handler, ... -> pump -> broker ->
// message; a transport under internal/broker never imports the pump, the
// pump never imports a transport; issue 17).
package layers

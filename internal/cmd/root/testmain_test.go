package root_test

import (
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest/cmdmain"
)

// TestMain lets testscript run this test binary as the `brighter` command
// (cmdmain.Main: the root's entry point, in an external test package
// because cmdmain imports this package).
func TestMain(m *testing.M) { cmdmain.Main(m) }

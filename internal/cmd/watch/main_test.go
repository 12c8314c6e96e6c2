package watch_test

import (
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest/cmdmain"
)

// TestMain lets testscript run this test binary as the `brighter` command
// (its tests start `brighter watch` as a process in a terminal).
func TestMain(m *testing.M) { cmdmain.Main(m) }

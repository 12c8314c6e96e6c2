package send_test

import (
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest/cmdmain"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
)

// TestMain lets testscript run this test binary as the `brighter` command
// (its tests run it in process, on the shared emulators).
func TestMain(m *testing.M) { cmdmain.Main(m) }

// IOStreams is the streams type the tests build literally.
type IOStreams = iostreams.IOStreams

// run runs the command line args on io in process, as main does
// (cmdmain.Run), and returns the exit code.
var run = cmdmain.Run

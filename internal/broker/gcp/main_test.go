package gcp

import (
	"fmt"
	"os"
	"testing"

	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// waitBoundParallel is how many of this package's parallel tests run at
// once: they wait on Google's emulator's 10 s ack deadlines, not on the CPU
// (at the default 2, 500 s of tests took 250 s on a loaded 2-core
// machine).
const waitBoundParallel = 8

// TestMain runs the package's tests on one Google Pub/Sub emulator
// (docs/emulators.md#googles-pubsub-emulator), waitBoundParallel at a time.
func TestMain(m *testing.M) {
	if err := pumptest.WaitBoundParallel(waitBoundParallel); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(gcptest.Main(m))
}

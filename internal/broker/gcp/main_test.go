package gcp

import (
	"os"
	"testing"

	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
)

// TestMain runs the package's tests on one Google Pub/Sub emulator (issue 15).
func TestMain(m *testing.M) { os.Exit(gcptest.Main(m)) }

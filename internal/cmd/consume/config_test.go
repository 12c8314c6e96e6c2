package consume

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/transport"
)

// TestConsumeConfigFromStdinRefusedWithTUI: -c - with --tui is a usage
// error saying why (the dashboard reads its keys from standard input),
// before standard input is read.
func TestConsumeConfigFromStdinRefusedWithTUI(t *testing.T) {
	in := strings.NewReader("subscriptions: []\n")
	streams := &iostreams.IOStreams{In: in, Out: &cmdtest.LockedBuffer{}, ErrOut: &cmdtest.LockedBuffer{}, Getenv: os.LookupEnv, OutTTY: true}
	o := &Options{io: streams, global: &factory.Factory{IOStreams: streams, LogFormat: "json"}, transports: transport.Default(),
		configPath: stdinConfig, tui: true}
	err := runConsume(context.Background(), o)
	if ee, ok := cmdutil.AsExitError(err); !ok || ee.Code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "where --tui reads its keys") {
		t.Fatalf("runConsume = %v, want a usage error saying --tui reads its keys from standard input", err)
	}
	if in.Len() == 0 {
		t.Errorf("standard input was read")
	}
}

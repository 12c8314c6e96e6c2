package consume_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/consume"
	"github.com/charmbracelet/x/ansi"
)

// closedPort returns a 127.0.0.1 port nothing listens on: every connection
// to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	return cmdtest.FreeAddr(t)
}

// `consume --tui` with the broker down. The dashboard (drawn on
// a stdout that says it is a terminal) shows the subscription failing
// since when with the last error, and the Error log lines in its log
// panel; stderr, not a terminal here, still gets every line. After q it
// says "draining (0 in flight)..." and the consumer exits 0.
func TestConsumeTUI_BrokerDown_StatusLogPanelAndDraining_I13(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_SESSION_TOKEN", "")
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	listenMust(t, os.WriteFile(cfg, []byte(`connections:
  aws:
    region: us-east-1
    endpoint: http://`+closedPort(t)+`
subscriptions:
  - name: orders
    transport: sqs
    channelName: orders
    makeChannels: assume
    channelFailureDelay: 20ms
    maxChannelFailureDelay: 100ms
    handler: {type: builtin, name: ack}
`), 0o644))

	keys, typed := io.Pipe()
	defer typed.Close()
	screen, logs := &cmdtest.LockedBuffer{}, &cmdtest.LockedBuffer{}
	iostreams := &IOStreams{In: keys, Out: screen, ErrOut: logs, OutTTY: true, Getenv: os.LookupEnv}
	exit := make(chan int, 1)
	go func() { exit <- run(context.Background(), iostreams, []string{"consume", "--config", cfg, "--tui"}) }()

	shown := func() string { return ansi.Strip(screen.String()) }
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok(shown()) {
			select {
			case code := <-exit:
				t.Fatalf("consume exited %d before the dashboard showed %s; logs:\n%s", code, what, logs.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("the dashboard never showed %s; screen:\n%s\nlogs:\n%s", what, shown(), logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The renderer writes only what changed, so each phrase is looked for
	// on its own.
	waitFor("the failing status, its last error and the log panel", func(s string) bool {
		return strings.Contains(s, "failing since") && strings.Contains(s, "last error:") && strings.Contains(s, "connection refused") &&
			strings.Contains(s, "ERROR orders: channel failure; backing off")
	})
	if !strings.Contains(logs.String(), "channel failure; backing off") {
		t.Errorf("stderr is not a terminal: the log lines must still reach it; got:\n%s", logs.String())
	}

	if _, err := typed.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	waitFor("draining", func(s string) bool { return strings.Contains(s, "draining (0 in flight)...") })
	select {
	case code := <-exit:
		if code != cmdutil.ExitOK {
			t.Fatalf("consume exited %d after q, want 0; logs:\n%s", code, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("consume did not exit after q; screen:\n%s", shown())
	}
	if !strings.Contains(logs.String(), consume.LogConsumeQuitKey) {
		t.Errorf("stderr lacks %q:\n%s", consume.LogConsumeQuitKey, logs.String())
	}
}

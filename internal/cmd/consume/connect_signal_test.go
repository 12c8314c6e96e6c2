package consume_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// connectStopBound is how soon a `brighter consume` still connecting to a
// broker that never answers must exit after its signal: well under the
// SQS call deadline (15s) it would otherwise wait for.
const connectStopBound = 5 * time.Second

// TestConsume_SignalWhileConnecting_StopsAtOnce starts `brighter consume`
// on an SQS subscription whose endpoint accepts connections and never
// answers, and signals it while it connects: SIGTERM, and SIGINT twice in
// a row (one stop, as timeout(1) or a terminal's ^C may deliver it). Each
// gives up the connection at once: exit 0 (a stop is not a failure), the
// log says the signal came while connecting, and the last line says the
// run was interrupted while connecting, within connectStopBound.
func TestConsume_SignalWhileConnecting_StopsAtOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		sigs []os.Signal
	}{
		{"SIGTERM", []os.Signal{syscall.SIGTERM}},
		{"double SIGINT", []os.Signal{syscall.SIGINT, syscall.SIGINT}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := cmdtest.NewSilentBroker(t)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "brighter.yaml"), []byte(fmt.Sprintf(`connections:
  aws:
    region: us-east-1
    endpoint: %s
subscriptions:
  - name: orders
    transport: sqs
    makeChannels: assume
    handler:
      type: builtin
      name: ack
`, b.URL)), 0o644); err != nil {
				t.Fatal(err)
			}
			r := cmdtest.SignalWhileConnecting(t, dir, b, 50*time.Millisecond, tc.sigs, "consume", "-c", "brighter.yaml")
			if r.Code != 0 {
				t.Fatalf("exit %d, want 0 (a stop while connecting); stderr:\n%s", r.Code, r.Stderr)
			}
			if r.Took > connectStopBound {
				t.Errorf("exited %v after the signal, want within %v (not at the broker's call deadline)", r.Took, connectStopBound)
			}
			if !strings.Contains(r.Stderr, "signal received while connecting to the broker") {
				t.Errorf("no log of the signal while connecting; stderr:\n%s", r.Stderr)
			}
			if !strings.Contains(r.Stderr, "brighter: interrupted while connecting to the broker (subscription orders)") {
				t.Errorf("no final line saying the run was interrupted while connecting; stderr:\n%s", r.Stderr)
			}
		})
	}
}

package lint_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// TestLintLive_SignalStopsTheLookUpsWithoutAReport starts `brighter lint
// --live` as a process on a file whose SQS endpoint accepts connections
// and never answers, and signals it (SIGINT, SIGTERM) while it waits on
// the broker: it gives up its look-ups at once, writes no report (no
// partial "no findings"), ends with a `brighter: ...` line saying the lint
// was interrupted, and exits 130.
func TestLintLive_SignalStopsTheLookUpsWithoutAReport(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			b := cmdtest.NewSilentBroker(t)
			dir := t.TempDir()
			yaml := "connections:\n  aws:\n    region: us-east-1\n    endpoint: " + b.URL + "\nsubscriptions:\n" +
				"  - name: orders\n    transport: sqs\n    channelName: orders-queue\n    routingKey: orders\n    makeChannels: validate\n    handler: {type: builtin, name: ack}\n"
			if err := os.WriteFile(filepath.Join(dir, "brighter.yaml"), []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			p := cmdtest.StartBrighter(t, dir, nil, "lint", "--live", "brighter.yaml")
			select {
			case <-b.Accepted:
			case <-time.After(30 * time.Second):
				t.Fatalf("lint --live did not reach the broker within 30s; stderr:\n%s", p.Stderr.String())
			}
			p.Signal(sig)
			code, took := p.Wait(t)
			stderr := p.Stderr.String()
			if code != 130 {
				t.Fatalf("exit %d, want 130; stdout:\n%s\nstderr:\n%s", code, p.Stdout.String(), stderr)
			}
			if took > 3*time.Second {
				t.Errorf("exited %v after the signal, want at once (not at the look-up's deadline)", took)
			}
			if out := p.Stdout.String(); out != "" {
				t.Errorf("an interrupted lint wrote a report:\n%s", out)
			}
			if !strings.Contains(stderr, "brighter: lint: interrupted during the --live look-ups; no report was written") {
				t.Errorf("no final line saying the lint was interrupted; stderr:\n%s", stderr)
			}
		})
	}
}

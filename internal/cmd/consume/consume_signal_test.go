package consume

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/transport"
)

// consumeWithSignals runs consume over a memory subscription whose exec
// handler takes a second, with signals fed from sigs and the forced exit
// recorded instead of taken. It returns the forced exit code (-1 for none),
// stderr and run's error.
func consumeWithSignals(t *testing.T, sigs chan os.Signal, send func()) (int, string, error) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(`{"id":"slow-1","topic":"slow","messageType":"MT_EVENT","body":"{}"}`+"\n"), 0o644))
	cfg := filepath.Join(dir, "brighter.yaml")
	must(t, os.WriteFile(cfg, []byte(`subscriptions:
  - name: slow
    transport: memory
    drainTimeout: 30s
    handler:
      type: exec
      command: sh
      args: ["-c", "touch started; sleep 1; exit 0"]
      timeout: 60s
    memory:
      seed: in.jsonl
      visibilityTimeout: 90s
`), 0o644))
	t.Chdir(dir)
	errOut := &cmdtest.LockedBuffer{}
	var exited atomic.Int64
	exited.Store(-1)
	streams := &iostreams.IOStreams{In: strings.NewReader(""), Out: &cmdtest.LockedBuffer{}, ErrOut: errOut, Getenv: os.LookupEnv}
	o := &Options{io: streams,
		global: &factory.Factory{IOStreams: streams, LogFormat: "json"}, transports: transport.Default(), configPath: cfg,
		exit:    func(code int) { exited.CompareAndSwap(-1, int64(code)) },
		signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }}
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
				send()
				return
			}
			time.Sleep(10 * time.Millisecond) // poll for the handler's file
		}
	}()
	err := runConsume(context.Background(), o)
	return int(exited.Load()), errOut.String(), err
}

// TestConsumeTwoSignalsAtOnceAreOneStop: two SIGTERMs in the same
// moment (as timeout(1) sends them: to the command, then to its process
// group) are one stop: consume drains the running handler and returns
// cleanly, no forced exit. A second signal after the merge window still
// forces the exit.
func TestConsumeTwoSignalsAtOnceAreOneStop(t *testing.T) {
	t.Run("at once", func(t *testing.T) {
		sigs := make(chan os.Signal, 2)
		forced, logs, err := consumeWithSignals(t, sigs, func() { sigs <- syscall.SIGTERM; sigs <- syscall.SIGTERM })
		if err != nil || forced != -1 {
			t.Fatalf("run = %v, forced exit %d; want a clean drain; stderr:\n%s", err, forced, logs)
		}
		if !strings.Contains(logs, logConsumeSignalMerged) || strings.Contains(logs, "second signal") || strings.Contains(logs, "cut off") {
			t.Errorf("stderr:\n%s\nwant the repeat taken as the same stop and the handler left to finish", logs)
		}
	})
	t.Run("apart", func(t *testing.T) {
		sigs := make(chan os.Signal, 2)
		forced, logs, err := consumeWithSignals(t, sigs, func() {
			sigs <- syscall.SIGTERM
			time.Sleep(signalMergeWindow + 200*time.Millisecond) // the gap under test
			sigs <- syscall.SIGTERM
		})
		// The forced stop either returns its error first or exits.
		byErr := err != nil && strings.Contains(err.Error(), "second signal")
		if (forced != cmdutil.ExitFailure && !byErr) || !strings.Contains(logs, "second signal") {
			t.Fatalf("run = %v, forced exit %d; want the second signal to force exit %d; stderr:\n%s", err, forced, cmdutil.ExitFailure, logs)
		}
	})
}

// must fails t on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package consume_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// `brighter consume` with makeChannels validate looks its SQS queue up
// once at start-up: validate's GetQueueUrl gives the consumer its URL, and
// the consumer does not ask again before its first receive (one
// GetQueueAttributes, validate's look at the queue's redrive policy, and
// nothing more before the receives).
func TestConsumeLooksItsSQSQueueUpOnceAtStartUp(t *testing.T) {
	w := callsSQS(t)
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(w.config, "proactor")), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr := &cmdtest.LockedBuffer{}
	streams := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: stderr, Getenv: os.LookupEnv}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- run(ctx, streams, []string{"consume", "--config", cfg}) }()
	deadline := time.Now().Add(30 * time.Second)
	for w.seen()["DeleteMessageBatch"]+w.seen()["DeleteMessage"] == 0 {
		select {
		case c := <-code:
			t.Fatalf("consume exited with %d before its first acknowledgement; stderr:\n%s", c, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no acknowledgement within 30s; calls %v; stderr:\n%s", w.seen(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	seen := w.seen()
	cancel()
	if c := <-code; c != cmdutil.ExitOK {
		t.Errorf("consume exited with %d; stderr:\n%s", c, stderr.String())
	}
	if seen["GetQueueUrl"] != 1 || seen["GetQueueAttributes"] != 1 {
		t.Errorf("start-up look-ups: GetQueueUrl %d, GetQueueAttributes %d (all calls %v), want 1 and 1", seen["GetQueueUrl"], seen["GetQueueAttributes"], seen)
	}
}

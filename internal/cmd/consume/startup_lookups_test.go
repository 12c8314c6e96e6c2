package consume_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/polltest"
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
	seen := consumeUntilAcknowledged(t, w, cfg, "DeleteMessageBatch", "DeleteMessage")
	if seen["GetQueueUrl"] != 1 || seen["GetQueueAttributes"] != 1 {
		t.Errorf("start-up look-ups: GetQueueUrl %d, GetQueueAttributes %d (all calls %v), want 1 and 1", seen["GetQueueUrl"], seen["GetQueueAttributes"], seen)
	}
}

// `brighter consume` on Pub/Sub with makeChannels validate, to an emulator
// named in the file, opens one connection to it, which both of the client
// library's admin clients use, and looks its channels up once at
// start-up: the probe is a GetTopic of the subscription's topic, and
// validate takes its answer instead of asking again (one GetTopic, one
// GetSubscription before the first receive).
func TestConsumeLooksItsPubSubChannelsUpOnceOverOneConnection(t *testing.T) {
	w := callsGCP(t, "stream")
	host := w.config[strings.Index(w.config, "emulatorHost: ")+len("emulatorHost: "):]
	host = host[:strings.IndexByte(host, '\n')]
	relay, conns := tcpRelay(t, host)
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(fmt.Sprintf(w.config, "proactor"), "emulatorHost: "+host, "emulatorHost: "+relay, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := consumeUntilAcknowledged(t, w, cfg, "Acknowledge")
	if seen["GetTopic"] != 1 || seen["GetSubscription"] != 1 {
		t.Errorf("start-up look-ups: GetTopic %d, GetSubscription %d (all calls %v), want 1 and 1", seen["GetTopic"], seen["GetSubscription"], seen)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("consume opened %d connections to the emulator, want 1", n)
	}
}

// consumeUntilAcknowledged runs `brighter consume --config cfg` until w has
// seen one of the acknowledgement calls acks, then stops it (it must exit
// 0) and returns the calls w had seen at that acknowledgement. It fails
// when consume exits first or nothing is acknowledged within 30 s.
func consumeUntilAcknowledged(t *testing.T, w callsWire, cfg string, acks ...string) map[string]int {
	t.Helper()
	stderr := &cmdtest.LockedBuffer{}
	streams := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: stderr, Getenv: os.LookupEnv}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- run(ctx, streams, []string{"consume", "--config", cfg}) }()
	acked := func() bool {
		seen := w.seen()
		for _, a := range acks {
			if seen[a] > 0 {
				return true
			}
		}
		return false
	}
	polltest.UntilMsg(t, 30*time.Second, func() string {
		return fmt.Sprintf("an acknowledgement; calls %v; stderr:\n%s", w.seen(), stderr.String())
	}, func() bool {
		if acked() {
			return true
		}
		select {
		case c := <-code:
			t.Fatalf("consume exited with %d before its first acknowledgement; stderr:\n%s", c, stderr.String())
		default:
		}
		return false
	})
	seen := w.seen()
	cancel()
	if c := <-code; c != cmdutil.ExitOK {
		t.Errorf("consume exited with %d; stderr:\n%s", c, stderr.String())
	}
	return seen
}

// tcpRelay relays each connection made to the address it returns to
// target, counting them; it stops when t ends.
func tcpRelay(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			mu.Lock()
			open = append(open, in, out)
			mu.Unlock()
			wg.Add(2)
			pipe := func(dst, src net.Conn) {
				defer wg.Done()
				_, _ = io.Copy(dst, src)
				_ = dst.Close()
			}
			go pipe(out, in)
			go pipe(in, out)
		}
	}()
	return ln.Addr().String(), &conns
}

package consume_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/consume"
	"github.com/brightergo/brighter/internal/observe"
)

// stopDrain is the drainTimeout of the stop tests' subscription; a stop
// must end the process within stopBound of its signal, whatever reads the
// observability listener.
const (
	stopDrain = 2 * time.Second
	stopBound = stopDrain + 5*time.Second
)

// writeExecSeedConfig writes into dir a memory seed file, in.jsonl, of
// one message (id NAME-1, topic NAME) and brighter.yaml: one memory
// subscription, name, of the given pump variant, seeded with it, with
// drainTimeout stopDrain, whose exec handler runs script with sh -c
// (timeout 60s).
func writeExecSeedConfig(t *testing.T, dir, name, variant, script string) {
	t.Helper()
	listenMust(t, os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(`{"id":"`+name+`-1","topic":"`+name+`","messageType":"MT_EVENT","body":"{}"}`+"\n"), 0o644))
	listenMust(t, os.WriteFile(filepath.Join(dir, "brighter.yaml"), []byte(fmt.Sprintf(`subscriptions:
  - name: %s
    transport: memory
    messagePumpType: %s
    drainTimeout: %s
    emptyChannelDelay: 10ms
    handler:
      type: exec
      command: sh
      args: ["-c", %q]
      timeout: 60s
    memory:
      seed: in.jsonl
`, name, variant, stopDrain, script)), 0o644))
}

// startStoppedConsume starts a `brighter consume --listen` process over a
// memory subscription of the given pump variant whose exec handler runs
// until the stop cuts it off, waits until it is ready and the handler has
// started (a message in flight), and returns it.
func startStoppedConsume(t *testing.T, variant string) *consumeProc {
	t.Helper()
	dir := t.TempDir()
	writeExecSeedConfig(t, dir, "slow", variant, "touch started; sleep 30")
	p := startConsume(t, dir, "brighter.yaml")
	waitFor(t, 30*time.Second, "the handler to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	}, p)
	return p
}

// sigtermExitsWithinBound sends p one SIGTERM and requires it to exit 0
// within stopBound, its listener stopped cleanly (every stream ended, no
// connection closed by force). It returns when the signal was sent.
func sigtermExitsWithinBound(t *testing.T, p *consumeProc) time.Time {
	t.Helper()
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case p.err = <-p.done:
		p.exited = true
	case <-time.After(stopBound):
		t.Fatalf("consume still running %s after one SIGTERM (drainTimeout %s); stderr:\n%s", stopBound, stopDrain, p.stderr.String())
	}
	t.Logf("consume exited %s after SIGTERM", time.Since(sent).Round(time.Millisecond))
	logs := p.stderr.String()
	if p.err != nil {
		t.Fatalf("consume stopped with %v, want exit 0; stderr:\n%s", p.err, logs)
	}
	for _, want := range []string{`"msg":"` + consume.LogConsumeStopping, `"msg":"` + consume.LogConsumeStopped + `"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, consume.LogListenerStopFailed) {
		t.Errorf("the listener had to be closed by force; stderr:\n%s", logs)
	}
	return sent
}

// stopVariants runs test once per pump variant, in parallel.
func stopVariants(t *testing.T, test func(t *testing.T, variant string)) {
	for _, v := range []string{"reactor", "proactor"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel() // a process of its own; most of the time is the drain
			test(t, v)
		})
	}
}

// readEventsToEnd opens /events of the consumer at addr (as SSE when sse)
// and reads it to its end in the background; the body read and the read's
// error arrive on the returned channel.
func readEventsToEnd(t *testing.T, addr string, sse bool) <-chan eventsRead {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/events", nil)
	listenMust(t, err)
	if sse {
		req.Header.Set("Accept", observe.ContentTypeSSE)
	}
	resp, err := http.DefaultClient.Do(req)
	listenMust(t, err)
	out := make(chan eventsRead, 1)
	go func() {
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- eventsRead{body: string(b), err: err}
	}()
	return out
}

// eventsRead is what a reader of /events read up to the end of the stream.
type eventsRead struct {
	body string
	err  error
}

// A stop (one SIGTERM) with a reader on /events, NDJSON or SSE, and a
// message in flight: the drain runs to drainTimeout, the reader is sent
// the records (the subscription's description first) and a clean end of
// stream (an SSE reader the closing comment last), and consume exits 0
// within drainTimeout + 5s. Both pump variants.
func TestConsumeStop_EndsWithAnEventsReaderAttached(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "ndjson", true: "sse"}[sse], func(t *testing.T) {
			stopVariants(t, func(t *testing.T, variant string) {
				p := startStoppedConsume(t, variant)
				read := readEventsToEnd(t, p.addr, sse)
				sent := sigtermExitsWithinBound(t, p)
				var got eventsRead
				select {
				case got = <-read:
				case <-time.After(time.Until(sent.Add(stopBound))):
					t.Fatal("the /events reader never saw the end of its stream")
				}
				if got.err != nil {
					t.Fatalf("reading /events: %v, want a clean end of stream; read:\n%s", got.err, got.body)
				}
				if !strings.Contains(got.body, `"kind":"subscription"`) || !strings.Contains(got.body, `"messageId":"slow-1"`) {
					t.Errorf("/events lacks the description or the message in flight:\n%s", got.body)
				}
				if sse && !strings.HasSuffix(got.body, observe.SSEClosedComment) {
					t.Errorf("the SSE stream does not end with %q:\n%s", observe.SSEClosedComment, got.body)
				}
			})
		})
	}
}

// A stop with a /metrics and /readyz poller polling in a loop: the
// listener keeps answering through the drain, /readyz 503 (draining) and
// /metrics 200, and consume still exits 0 within drainTimeout + 5s. Both
// pump variants.
func TestConsumeStop_EndsWithAMetricsPoller(t *testing.T) {
	stopVariants(t, func(t *testing.T, variant string) {
		p := startStoppedConsume(t, variant)
		var exited, drainingReady, drainingMetrics atomic.Bool
		var rounds atomic.Int32 // the poller's rounds so far
		polled := make(chan struct{})
		go func() {
			defer close(polled)
			get := func(path string) (int, string) { return httpGet("http://" + p.addr + path) }
			for !exited.Load() {
				// Ready before the signal (startConsume waited for it): a
				// 503 is the drain.
				if code, body := get("/readyz"); code == http.StatusServiceUnavailable && strings.Contains(body, "draining") {
					drainingReady.Store(true)
				}
				if code, _ := get("/metrics"); code == http.StatusOK && drainingReady.Load() {
					drainingMetrics.Store(true)
				}
				rounds.Add(1)
				time.Sleep(20 * time.Millisecond) // poll interval
			}
		}()
		waitFor(t, 30*time.Second, "a few polls before the stop", func() bool { return rounds.Load() >= 3 }, p)
		sigtermExitsWithinBound(t, p)
		exited.Store(true)
		<-polled
		if !drainingReady.Load() || !drainingMetrics.Load() {
			t.Errorf("during the drain: /readyz 503 draining seen %v, /metrics 200 after it seen %v; want both", drainingReady.Load(), drainingMetrics.Load())
		}
	})
}

// A stop with `brighter watch` (a process on a terminal) following the
// consumer: consume exits 0 within drainTimeout + 5s, and the dashboard
// says the event stream ended and that it is reconnecting, backing off.
func TestConsumeStop_EndsWithBrighterWatchAttached(t *testing.T) {
	stopVariants(t, func(t *testing.T, variant string) {
		p := startStoppedConsume(t, variant)
		run := fmt.Sprintf("stop-%s-%d", variant, time.Now().UnixNano()%1e9)
		s := cmdtest.StartTmux(t, run, cmdtest.Bin(t)+" watch --target http://"+p.addr, []string{"NO_COLOR=1"})
		s.Await("watch connected to the consumer", func(sc string) bool {
			return strings.Contains(sc, "1/1 targets connected") && strings.Contains(sc, "slow-1")
		})
		sigtermExitsWithinBound(t, p)
		sc := s.Await("watch saying the stream ended", func(sc string) bool {
			return strings.Contains(sc, "event stream ended") && strings.Contains(sc, "retrying in")
		})
		t.Logf("watch after the stop:\n%s", sc)
	})
}

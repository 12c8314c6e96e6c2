package consume_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// switchableBlackHole is HTTP middleware in front of fauxqs: it passes every
// request on until holed is set, and from then on answers none (each waits
// until its client gives up), as an endpoint that accepts connections and
// says nothing.
func switchableBlackHole(t *testing.T, target string) (string, *atomic.Bool) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	holed := &atomic.Bool{}
	closed := make(chan struct{})
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if holed.Load() {
			// Read the request, so that the server notices the client
			// going away, then say nothing.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-closed:
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(closed)
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL, holed
}

const (
	// stallReceiveTimeOut is the subscription's timeOut in
	// TestConsumeReadyzBoundWithBlackHoledSQS.
	stallReceiveTimeOut = time.Second
	// stallLoadSlack is the time the pump may take between two receives on
	// a loaded machine; far below the 11 s of a failed receive's deadline,
	// which the test tells apart from the start of the first unanswered one.
	stallLoadSlack = 2 * time.Second
)

// sinceRE reads the stall's start from /readyz's reason.
var sinceRE = regexp.MustCompile(`no successful broker call since (\S+) `)

// TestConsumeReadyzBoundWithBlackHoledSQS: docs/commands/consume.md's
// bound holds end to end. consume runs on SQS (fauxqs) behind an endpoint
// that is then black-holed; /readyz turns 503 stallAfter after the start of
// the first receive that got no answer (within a second's slack), and says
// the calls have failed since then (at most the receive in flight when the
// hole opened: timeOut 1s before it), not since the end of the first failed
// receive (its deadline, 11 s later). The first answered call makes it 200
// again.
func TestConsumeReadyzBoundWithBlackHoledSQS(t *testing.T) {
	// In parallel: its own queue and black hole, named in the file (not
	// in the environment; the credentials are the binary's, stopPubSubAfter);
	// it waits out stallAfter and a receive's deadline.
	t.Parallel()
	emu := cmdtest.SharedSQS(t)
	endpoint, holed := switchableBlackHole(t, emu.Endpoint)
	const stallAfter = 15 * time.Second // longer than a receive's deadline (timeOut 1s + 10s margin)
	tag := fmt.Sprintf("s%d", time.Now().UnixNano()%1e9)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "brighter.yaml")
	listenMust(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`connections:
  aws:
    region: %s
    endpoint: %s
subscriptions:
  - name: orders
    transport: sqs
    channelName: orders-%s
    timeOut: %s
    emptyChannelDelay: 10ms
    stallAfter: %s
    handler: {type: builtin, name: ack}
`, sqstest.Region, endpoint, tag, stallReceiveTimeOut, stallAfter)), 0o644))
	streams := &IOStreams{In: strings.NewReader(""), Out: &cmdtest.LockedBuffer{}, ErrOut: &cmdtest.LockedBuffer{}, Getenv: os.LookupEnv}
	if code := run0(streams, "send", "--config", cfg, "--subscription", "orders", "--id", "m-"+tag, "--body", `{}`); code != cmdutil.ExitOK {
		t.Fatalf("send exited %d: %s", code, streams.ErrOut)
	}
	base, logs := consumeListening(t, cfg)
	readyz := func() (int, string) { return httpGet(base + "/readyz") }
	listenWaitUntil(t, "ready", func() bool { code, _ := readyz(); return code == http.StatusOK })

	holedAt := time.Now()
	holed.Store(true)
	var body string
	deadline := holedAt.Add(stallAfter + 20*time.Second)
	for {
		code, b := readyz()
		if code == http.StatusServiceUnavailable {
			body = b
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d %s after the endpoint was black-holed for %s; logs:\n%s", code, b, time.Since(holedAt), logs.String())
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
	notReadyAt := time.Now()
	m := sinceRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("/readyz 503 body %q names no stall start", body)
	}
	since, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		t.Fatal(err)
	}
	// The first unanswered receive starts once the one in flight when the
	// hole opened is answered (the hole takes new requests only): within
	// its timeOut, plus the pump's turn between two receives, which took
	// over a second with this package's tests in parallel at load 15
	//. RFC 3339 to the second: since is cut, so it reads up to
	// 1s early.
	firstUnanswered := stallReceiveTimeOut + stallLoadSlack
	if since.After(holedAt.Add(firstUnanswered)) || since.Before(holedAt.Add(-3*time.Second)) {
		t.Errorf("stall since %s, hole opened at %s: want the start of the first unanswered receive, not the end of the first failed one", since, holedAt.UTC().Format(time.RFC3339Nano))
	}
	if late := notReadyAt.Sub(holedAt); late > stallAfter+firstUnanswered+500*time.Millisecond || late < stallAfter-2*time.Second {
		t.Errorf("/readyz turned 503 %s after the hole opened, want about stallAfter %s (docs/commands/consume.md); body %q", late, stallAfter, body)
	}
	holed.Store(false)
	listenWaitUntil(t, "ready again", func() bool { code, _ := readyz(); return code == http.StatusOK })
}

// consumeListening runs `brighter consume --config cfg --listen
// 127.0.0.1:0 --log-format json` in process until the test ends (then it
// cancels it and waits up to 40 s for it to exit), and returns the base
// URL of its health endpoints and the buffer its JSON log goes to.
func consumeListening(t *testing.T, cfg string) (base string, logs *cmdtest.LockedBuffer) {
	t.Helper()
	logs = &cmdtest.LockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: logs, Getenv: os.LookupEnv},
			[]string{"consume", "--config", cfg, "--listen", "127.0.0.1:0", "--log-format", "json"})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-exit:
		case <-time.After(40 * time.Second):
			t.Errorf("consume did not exit")
		}
	})
	return "http://" + listenAddr(t, logs), logs
}

// httpGet is the status code and body of a GET of url: 0 and the error
// when nothing answered.
func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

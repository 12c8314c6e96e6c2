package consume_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// Modes of faultyFront.
const (
	frontPass    int32 = iota // forward to the emulator
	frontRefuse               // answer 500 (a broker refusing the call)
	frontResetIt              // reset the connection (RST), as a proxy refusing connections
)

// faultyFront is HTTP middleware in front of fauxqs whose answer the test
// switches: forward, answer 500, or reset the connection.
func faultyFront(t *testing.T, target string) (string, *atomic.Int32) {
	t.Helper()
	u, err := url.Parse(target)
	listenMust(t, err)
	mode := &atomic.Int32{}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case frontRefuse:
			_, _ = io.Copy(io.Discard, r.Body)
			http.Error(w, "refused by the test", http.StatusInternalServerError)
		case frontResetIt:
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close sends RST: "connection reset by peer"
			}
			_ = conn.Close()
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL, mode
}

// failedRE reads the failure count and the error from /readyz's reason.
var failedRE = regexp.MustCompile(`\((\d+) failed\): (.*)`)

// TestConsumeReadyzReasonFollowsTheFailures: /readyz's reason is not
// frozen at the moment of the stall. consume runs on SQS (fauxqs) behind a
// front that refuses every call (500) until the subscription stalls, then
// resets every connection: while it stays stalled, /readyz's reason counts
// the failures as they climb (as brighter_channel_failures_total does) and
// gives the latest error, the connection reset, not the refusal that
// stalled it. The first answered call makes it 200 again.
func TestConsumeReadyzReasonFollowsTheFailures(t *testing.T) {
	t.Parallel() // its own queue and front
	emu := cmdtest.SharedSQS(t)
	endpoint, mode := faultyFront(t, emu.Endpoint)
	tag := fmt.Sprintf("r%d", time.Now().UnixNano()%1e9)
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
    timeOut: 1s
    emptyChannelDelay: 10ms
    channelFailureDelay: 50ms
    maxChannelFailureDelay: 200ms
    stallAfter: 1s
    handler: {type: builtin, name: ack}
`, sqstest.Region, endpoint, tag)), 0o644))
	base, _ := consumeListening(t, cfg)
	get := func(path string) (int, string) { return httpGet(base + path) }
	listenWaitUntil(t, "ready", func() bool { code, _ := get("/readyz"); return code == http.StatusOK })

	mode.Store(frontRefuse)
	var stalledAt int
	var stalledWith string
	listenWaitUntil(t, "stalled on the refusals", func() bool {
		code, body := get("/readyz")
		m := failedRE.FindStringSubmatch(body)
		if code != http.StatusServiceUnavailable || m == nil {
			return false
		}
		stalledAt, _ = strconv.Atoi(m[1])
		stalledWith = m[2]
		return true
	})
	if strings.Contains(stalledWith, "reset") {
		t.Fatalf("stalled with %q before any connection was reset", stalledWith)
	}
	mode.Store(frontResetIt)
	var body string
	listenWaitUntil(t, "the reason to follow the failures", func() bool {
		var code int
		code, body = get("/readyz")
		m := failedRE.FindStringSubmatch(body)
		if code != http.StatusServiceUnavailable || m == nil {
			return false
		}
		n, _ := strconv.Atoi(m[1])
		return n >= stalledAt+3 && strings.Contains(m[2], "connection reset by peer")
	})
	t.Logf("stalled: (%d failed): %s; later: %s", stalledAt, stalledWith, strings.TrimSpace(body))
	n, _ := strconv.Atoi(failedRE.FindStringSubmatch(body)[1])
	_, metrics := get("/metrics")
	total := regexp.MustCompile(`brighter_channel_failures_total\{[^}]*subscription="orders"[^}]*\} (\d+)`).FindStringSubmatch(metrics)
	if total == nil {
		t.Fatalf("/metrics has no brighter_channel_failures_total for orders:\n%s", metrics)
	}
	if c, _ := strconv.Atoi(total[1]); c < n {
		t.Errorf("brighter_channel_failures_total %d below /readyz's %d failed", c, n)
	}
	mode.Store(frontPass)
	listenWaitUntil(t, "ready again", func() bool { code, _ := get("/readyz"); return code == http.StatusOK })
}

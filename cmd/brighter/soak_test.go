package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/faultproxy"
)

// soakEnv names the soak's length (a Go duration); `make soak` sets it
// (10m). Unset, the soak is the suite's short form, soakShort.
const soakEnv = "BRIGHTER_SOAK_DURATION"

// soakShort is the length of the soak in the suite (make test).
const soakShort = 60 * time.Second

// soakBudget is the subscription's requeueCount in the soak.
const soakBudget = 3

// soakStallAfter is the subscription's stallAfter in the soak: a black hole
// longer than it must make /readyz answer 503.
const soakStallAfter = 3 * time.Second

// soakHandler is the exec handler of the soak's consume processes: one line
// per invocation, naming the consume process that ran it ($PPID), then a
// done marker; it acknowledges (exit 0).
const soakHandler = `id=$BRIGHTER_MESSAGE_ID
echo "$PPID" >> "$OUT/calls-$id"
touch "$OUT/done-$id"`

// soakCase is one transport of the soak: its connection block (endpoint
// through the proxy) and settings, and a direct connection block for
// sending and reading back.
type soakCase struct {
	name                   string
	conn, direct, settings string
	source                 string // the source's URL for dlq peek
	sourceFlags            []string
}

// TestSoak_Issue31 is the soak harness (docs/reliability.md): messages go
// through two `brighter consume` processes on one subscription, through a
// TCP fault proxy in front of the broker (fauxqs; the RocketMQ test broker;
// pstest for Pub/Sub, pull mode),
// while the harness SIGKILLs a process (and starts a replacement), resets
// every connection, adds latency and black-holes the broker. Checked from
// outside, at the end: nothing lost (every message handled and
// acknowledged, or dead-lettered; the source empty), no message handled
// more than its budget plus one per SIGKILLed process that ran it, no hot
// loop while the broker is black-holed (each process under a quarter of a
// core), and readiness truthful (503 once the black hole lasted stallAfter,
// 200 again after it lifted). Its length is BRIGHTER_SOAK_DURATION (make
// soak), else 60 s; messages are sent in rounds all along.
func TestSoak_Issue31(t *testing.T) {
	t.Parallel()
	d := soakShort
	if v := os.Getenv(soakEnv); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("%s=%q: %v", soakEnv, v, err)
		}
	}
	emu := sharedSQS(t)
	sqsProxy := startProxy(t, strings.TrimPrefix(emu.Endpoint, "http://"))
	rmq, err := rmqtest.Start(rmqtest.Options{AutoCreateTopics: true})
	if err != nil {
		t.Fatalf("start the RocketMQ test broker: %v", err)
	}
	t.Cleanup(rmq.Close)
	rmqProxy := startProxy(t, rmq.Endpoint())
	_, port, _ := net.SplitHostPort(rmqProxy.Addr())
	p, _ := strconv.Atoi(port)
	rmq.AdvertisePort(p) // every RocketMQ call through the proxy, not only the route query
	// Google's emulator stops redelivering nacked messages under load
	// (local-brokers.md §2c): the Pub/Sub soak runs on pstest, which
	// redelivers faithfully.
	ps := pstest.NewServer()
	t.Cleanup(func() { _ = ps.Close() })
	psProxy := startProxy(t, ps.Addr)
	run := fmt.Sprintf("k%d", time.Now().UnixNano()%1e9)
	cases := []struct {
		c     soakCase
		proxy *faultproxy.Proxy
	}{
		{soakCase{name: "sqs",
			conn:     fmt.Sprintf("  aws:\n    region: %s\n    endpoint: http://%s\n", sqstest.Region, sqsProxy.Addr()),
			direct:   fmt.Sprintf("  aws:\n    region: %s\n    endpoint: %s\n", sqstest.Region, emu.Endpoint),
			settings: "    sqs: {visibilityTimeout: 4s}\n",
			source:   "sqs://soak-sqs-" + run, sourceFlags: []string{"--endpoint", emu.Endpoint, "--region", sqstest.Region}}, sqsProxy},
		{soakCase{name: "rocketmq",
			conn:     fmt.Sprintf("  rocketmq:\n    endpoint: %s\n", rmqProxy.Addr()),
			direct:   fmt.Sprintf("  rocketmq:\n    endpoint: %s\n", rmq.Endpoint()),
			settings: "    rocketmq: {consumerGroup: g-soak-" + run + ", invisibleDuration: 4s}\n",
			source:   "rocketmq://soak-rocketmq-" + run + "?group=g-soak-" + run, sourceFlags: []string{"--rocketmq-endpoint", rmq.Endpoint()}}, rmqProxy},
		{soakCase{name: "gcp",
			conn:     fmt.Sprintf("  gcp:\n    projectId: soak\n    emulatorHost: %s\n", psProxy.Addr()),
			direct:   fmt.Sprintf("  gcp:\n    projectId: soak\n    emulatorHost: %s\n", ps.Addr),
			settings: gcpScaleOut("pull", "soak-gcp-"+run),
			source:   "pubsub://projects/soak/subscriptions/soak-gcp-" + run, sourceFlags: []string{"--endpoint", ps.Addr}}, psProxy},
	}
	for _, tc := range cases {
		t.Run(tc.c.name, func(t *testing.T) {
			t.Parallel()
			soak(t, tc.c, tc.proxy, "soak-"+tc.c.name+"-"+run, d)
		})
	}
}

func startProxy(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(target)
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// soakConfig is the subscriptions file of the soak on channel with conn.
func soakConfig(t *testing.T, dir, name, conn string, c soakCase, channel string) string {
	t.Helper()
	file := filepath.Join(dir, name)
	yaml := fmt.Sprintf(`connections:
%ssubscriptions:
  - name: soak
    transport: %s
    channelName: %s
    routingKey: %s
    makeChannels: create
    noOfPerformers: 2
    bufferSize: 4
    timeOut: 1s
    emptyChannelDelay: 50ms
    channelFailureDelay: 100ms
    maxChannelFailureDelay: 1s
    callTimeout: 2s
    stallAfter: %s
    requeueCount: %d
    deadLetterRoutingKey: %s-dlq
    handler:
      type: exec
      command: sh
      args: ["-c", %q]
      timeout: 30s
    drainTimeout: 10s
%s`, conn, c.name, channel, channel, soakStallAfter, soakBudget, channel, soakHandler, c.settings)
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func soak(t *testing.T, c soakCase, proxy *faultproxy.Proxy, channel string, d time.Duration) {
	dir := t.TempDir()
	file := soakConfig(t, dir, "brighter.yaml", c.conn, c, channel)
	direct := soakConfig(t, dir, "direct.yaml", c.direct, c, channel)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	var ids []string
	sendRound := func(n int) {
		got := strings.Fields(brighter(t, dir, "send", "--config", direct, "--subscription", "soak", "--count", strconv.Itoa(n), "--body", "{}"))
		if len(got) != n {
			t.Fatalf("send printed %d ids, want %d", len(got), n)
		}
		ids = append(ids, got...)
	}
	procs := []*consumeProc{startConsume(t, dir, file, "OUT="+out), startConsume(t, dir, file, "OUT="+out)}
	all := append([]*consumeProc(nil), procs...)
	killed := map[string]bool{} // pids SIGKILLed
	killOne := func(i int) {
		killed[strconv.Itoa(procs[i].cmd.Process.Pid)] = true
		procs[i].kill(t)
		procs[i] = startConsume(t, dir, file, "OUT="+out)
		all = append(all, procs[i])
	}
	var stalls, hot []string
	start := time.Now()
	round := 0
	for time.Since(start) < d || round < 6 {
		sendRound(20)
		switch round % 6 {
		case 0: // latency both ways
			proxy.SetLatency(150 * time.Millisecond)
			proxy.SetMode(faultproxy.Latency)
			soakPause(d)
			proxy.SetMode(faultproxy.Pass)
		case 1:
			killOne(round / 6 % 2)
		case 2: // connection resets
			for range 3 {
				proxy.Reset()
				soakPause(d / 3)
			}
		case 3: // black hole past stallAfter: not ready, and no hot loop
			cpu0 := soakCPU(t, procs)
			holeStart := time.Now()
			proxy.SetMode(faultproxy.BlackHole)
			proxy.Reset() // open connections too
			// A receive the broker never answers fails at its deadline
			// (timeOut 1s + the 10s margin); the channel is stalled at the
			// first failure stallAfter after the first: readiness is false
			// within stallAfter + two receive deadlines + a back-off.
			bound := soakStallAfter + 2*(time.Second+10*time.Second) + time.Second + 10*time.Second
			notReady := map[int]bool{}
			soakEventually(bound, func() bool {
				for i, p := range procs {
					if !notReady[i] && readyz(p.addr) == 503 {
						notReady[i] = true
					}
				}
				return len(notReady) == len(procs)
			})
			for i, p := range procs {
				if !notReady[i] {
					stalls = append(stalls, fmt.Sprintf("round %d: pid %d still ready %s into a black hole (stallAfter %s)", round, p.cmd.Process.Pid, time.Since(holeStart).Round(time.Second), soakStallAfter))
				}
			}
			held := time.Since(holeStart)
			for i, used := range soakCPU(t, procs) {
				if share := float64(used-cpu0[i]) / float64(held); share > 0.25 {
					hot = append(hot, fmt.Sprintf("round %d: pid %d used %.0f%% of a core in a black hole", round, procs[i].cmd.Process.Pid, 100*share))
				}
			}
			proxy.SetMode(faultproxy.Pass)
			for _, p := range procs {
				if !soakEventually(60*time.Second, func() bool { return readyz(p.addr) == 200 }) {
					stalls = append(stalls, fmt.Sprintf("round %d: pid %d not ready a minute after the black hole lifted", round, p.cmd.Process.Pid))
				}
			}
		case 4:
			killOne(1 - round/6%2)
		case 5:
			soakPause(d)
		}
		round++
	}
	proxy.SetMode(faultproxy.Pass)
	dlqHolds := func() map[string]bool {
		m := map[string]bool{}
		for _, id := range peekIDs(t, dir, "dlq", "peek", "soak", "--config", direct, "--output", "json") {
			m[id] = true
		}
		return m
	}
	done := func(id string) bool {
		_, err := os.Stat(filepath.Join(out, "done-"+id))
		return err == nil
	}
	waitFor(t, 3*time.Minute, "every message handled", func() bool {
		for _, id := range ids {
			if !done(id) {
				return false
			}
		}
		return true
	}, procs...)
	for _, p := range procs {
		p.terminate(t) // errors in its log are expected: the harness made the broker fail
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range all {
				t.Logf("consume pid %d log:\n%s", p.cmd.Process.Pid, soakTail(p.stderr.String(), 40))
			}
		}
	})
	dl := dlqHolds()
	over, again := 0, 0
	for _, id := range ids {
		b, _ := os.ReadFile(filepath.Join(out, "calls-"+id))
		lines := strings.Fields(string(b))
		interrupted := 0
		for _, pid := range lines {
			if killed[pid] {
				interrupted++
			}
		}
		if len(lines) > 1 {
			again++
		}
		if len(lines) > soakBudget+interrupted {
			over++
			t.Errorf("%s handled %d times (by %v), want at most %d (budget) + %d (SIGKILLed processes that ran it)", id, len(lines), lines, soakBudget, interrupted)
		}
		if !done(id) && !dl[id] {
			t.Errorf("%s lost: never handled to the end, not dead-lettered", id)
		}
	}
	// The source is empty once the last leases lapsed.
	var left []string
	if !soakEventually(time.Minute, func() bool {
		left = peekIDs(t, dir, append([]string{"dlq", "peek", c.source, "--output", "json"}, c.sourceFlags...)...)
		return len(left) == 0
	}) {
		t.Errorf("the source still holds %d messages: %v", len(left), left)
	}
	for _, s := range stalls {
		t.Error("readiness: " + s)
	}
	for _, h := range hot {
		t.Error("hot loop: " + h)
	}
	t.Logf("soak %s: %s, %d rounds, %d messages, %d SIGKILLs, %d connection resets, %d handled more than once, %d dead-lettered, %d over budget",
		c.name, time.Since(start).Round(time.Second), round, len(ids), len(killed), proxy.Resets(), again, len(dl), over)
}

// soakPause is one chaos phase's length: a sixth of the soak's length in
// rounds of six, between 2 s and 20 s.
func soakPause(d time.Duration) {
	time.Sleep(min(max(d/36, 2*time.Second), 20*time.Second))
}

// soakEventually polls cond every 100 ms for up to within.
func soakEventually(within time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// readyz is the status code of consume's /readyz on addr (0: no answer).
func readyz(addr string) int {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// soakCPU is the CPU time (user + system) each process has used so far,
// from /proc/PID/stat.
func soakCPU(t *testing.T, procs []*consumeProc) []time.Duration {
	t.Helper()
	out := make([]time.Duration, len(procs))
	for i, p := range procs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
		if err != nil {
			t.Fatalf("read the CPU time of pid %d: %v", p.cmd.Process.Pid, err)
		}
		// Fields after the command name (which is in parentheses): state is
		// field 3, utime 14, stime 15.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[i] = time.Duration(ut+st) * time.Second / 100 // USER_HZ
	}
	return out
}

// soakTail is the last n lines of s.
func soakTail(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(ls[max(len(ls)-n, 0):], "\n")
}

package consume_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/polltest"
)

// TestConsumeStop_WaitingOnlyForTheReceiveInFlightSaysSo starts `brighter
// consume` as a process on an empty SQS queue of fauxqs (a long poll of
// timeOut 6s always waiting on the broker), in each pump variant, and
// sends SIGINT: with no handler running, the drain waits only for that
// receive (let end so that what it takes is released, not left
// invisible), and consume says so at once, once, naming the subscription
// and how long at most: its timeOut plus the pump's receive margin (10s),
// the receive's own deadline, which a broker that never answers makes it
// wait in full; then it exits 0.
func TestConsumeStop_WaitingOnlyForTheReceiveInFlightSaysSo(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	const line = `msg="draining: waiting for the receive in flight to return; its messages will be released" subscription=orders up_to=16s`
	for _, variant := range []string{"reactor", "proactor"} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			queue := fmt.Sprintf("drain-recv-%s-%d", variant, time.Now().UnixNano())
			// consume talks to fauxqs through a counting proxy, which shows
			// when its first long poll is on the wire.
			counter, err := faultproxy.StartSQSCounter(emu.Endpoint)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(counter.Close)
			yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: orders\n    transport: sqs\n    channelName: %s\n    routingKey: %s\n    makeChannels: create\n    messagePumpType: %s\n    timeOut: 6s\n    handler: {type: builtin, name: ack}\n",
				sqstest.Region, counter.URL(), queue, queue, variant)
			if err := os.WriteFile(filepath.Join(dir, "brighter.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			p := cmdtest.StartBrighter(t, dir, nil, "consume")
			polltest.UntilMsg(t, 30*time.Second, func() string { return "a ReceiveMessage to reach the broker; stderr:\n" + p.Stderr.String() }, func() bool {
				return counter.Counts()["ReceiveMessage"] > 0
			})
			// The first long poll is waiting on the broker (the queue is empty).
			p.Signal(syscall.SIGINT)
			polltest.UntilMsg(t, 3*time.Second, func() string {
				return "the signal's drain to say it waits for the receive in flight; stderr:\n" + p.Stderr.String()
			}, func() bool { return strings.Contains(p.Stderr.String(), line) })
			code, _ := p.Wait(t)
			logs := p.Stderr.String()
			if code != 0 {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, logs)
			}
			if n := strings.Count(logs, "draining: waiting for the receive in flight"); n != 1 {
				t.Errorf("said %d times, want once; stderr:\n%s", n, logs)
			}
			if i, j := strings.Index(logs, line), strings.Index(logs, "message pump stopped"); j < 0 || i > j {
				t.Errorf("the line is not before the pump's stop; stderr:\n%s", logs)
			}
		})
	}
}

package consume_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/faultproxy"
)

// benchFixedPoll is how often BenchmarkConsumeFixedCost looks whether the
// first receive has reached the counting proxy: it bounds the error of the
// start-up's timing (and its polls cost both builds the same).
const benchFixedPoll = 200 * time.Microsecond

// BenchmarkConsumeFixedCost measures what a run of `brighter consume` costs
// whatever its messages: its start-up, from run() until its first receive
// reaches the broker (the counting proxy counts a ReceiveMessage on SQS, the
// StreamingPull stream opening on Pub/Sub), and its stop, from the cancel
// (a stop signal's twin) until run() returned. Each op runs it once on an
// empty queue (subscription), with the settings of BenchmarkConsumeSQS
// (sqs/proactor, sqs/reactor: timeOut 1s, makeChannels validate, no
// --listen) and of BenchmarkConsumePubSub (pubsub/stream: --listen, its
// /metrics not scraped). The stop comes as soon as the first receive is
// seen, so an SQS stop waits out that long poll (up to timeOut), as the
// consume benchmarks' stops do.
//
// Reported, medians over the ops: startup-ms and startup-cpu-ms (this
// process's user + system CPU meanwhile, the counting proxy included),
// stop-ms and stop-cpu-ms. BRIGHTER_BENCH_SIDE_PROFILE=DIR writes a CPU
// profile of the whole process for each start-up (DIR/startup-NANOS.prof)
// and each stop (DIR/stop-NANOS.prof).
func BenchmarkConsumeFixedCost(b *testing.B) {
	dir := b.TempDir()
	b.Run("sqs", func(b *testing.B) {
		ctx := context.Background()
		emu, err := sqstest.Start(ctx)
		if err != nil {
			b.Fatalf("start the SQS emulator: %v", err)
		}
		b.Cleanup(emu.Stop)
		benchSQSEnv(b, dir)
		clients := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
		counter := startSQSCounter(b, emu.Endpoint)
		for _, variant := range []string{"proactor", "reactor"} {
			b.Run(variant, func(b *testing.B) {
				benchFixedRun(b, counter, "ReceiveMessage", func(tag string) []string {
					name := "bench-fixed-" + tag
					benchSQSFill(b, clients.SQS, name, 0)
					return []string{"consume", "--config", benchSQSConfig(b, dir, counter.URL(), name, variant)}
				})
			})
		}
	})
	b.Run("pubsub", func(b *testing.B) {
		var counter *faultproxy.Counter
		client, srv := gcptest.StartVia(b, benchGCPProject, nil, gcp.Connect, func(emulator string) string {
			counter = startGCPCounter(b, emulator)
			return counter.Addr()
		})
		b.Run("stream", func(b *testing.B) {
			benchFixedRun(b, counter, "StreamingPull", func(tag string) []string {
				name := "bench-fixed-" + tag
				benchGCPFill(b, client, srv.Project, name, 0)
				cfg := benchGCPConfig(b, dir, srv.Project, counter.Addr(), name, "stream")
				return []string{"consume", "--config", cfg, "--listen", cmdtest.AnyListen}
			})
		})
	})
}

// benchFixedRun runs b.N ops: each makes its queue and the command line
// with setup (timer stopped), runs it until counter has seen a call named
// first, then cancels it and waits for it to return; it reports the
// medians of BenchmarkConsumeFixedCost.
func benchFixedRun(b *testing.B, counter *faultproxy.Counter, first string, setup func(tag string) []string) {
	var startup, startupCPU, stop, stopCPU []float64
	profDir := os.Getenv("BRIGHTER_BENCH_SIDE_PROFILE")
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		args := setup(fmt.Sprintf("%d-%d", time.Now().UnixNano()%1e9, i))
		counter.Reset()
		runtime.GC()
		b.StartTimer()
		stderr := &cmdtest.LockedBuffer{}
		streams := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: stderr, Getenv: os.LookupEnv}
		ctx, cancel := context.WithCancel(context.Background())
		code := make(chan int, 1)
		endProfile := func() {}
		if profDir != "" {
			benchFixedProfileRate()
			endProfile = benchSideProfile(profDir, "startup")
		}
		start, cpu := time.Now(), benchProcessCPU(b)
		go func() { code <- run(ctx, streams, args) }()
		deadline := time.NewTimer(benchSQSDeadline)
	wait:
		for counter.Counts()[first] == 0 {
			select {
			case got := <-code:
				cancel()
				b.Fatalf("brighter consume exited with %d before its first %s; stderr:\n%s", got, first, stderr.String())
			case <-deadline.C:
				cancel()
				b.Fatalf("no %s within %s; stderr:\n%s", first, benchSQSDeadline, stderr.String())
			default:
			}
			if counter.Counts()[first] > 0 {
				break wait
			}
			time.Sleep(benchFixedPoll)
		}
		deadline.Stop()
		up, upCPU := time.Since(start), benchProcessCPU(b)-cpu
		endProfile()
		if profDir != "" {
			benchFixedProfileRate()
			endProfile = benchSideProfile(profDir, "stop")
		}
		stopAt, cpu := time.Now(), benchProcessCPU(b)
		cancel()
		got := <-code
		down, downCPU := time.Since(stopAt), benchProcessCPU(b)-cpu
		endProfile()
		b.StopTimer()
		if got != cmdutil.ExitOK {
			b.Fatalf("brighter consume exited with %d; stderr:\n%s", got, stderr.String())
		}
		if s := stderr.String(); strings.Contains(s, "level=ERROR") {
			b.Fatalf("brighter consume logged an error:\n%s", s)
		}
		startup, startupCPU = append(startup, ms(up)), append(startupCPU, ms(upCPU))
		stop, stopCPU = append(stop, ms(down)), append(stopCPU, ms(downCPU))
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(median(startup), "startup-ms")
	b.ReportMetric(median(startupCPU), "startup-cpu-ms")
	b.ReportMetric(median(stop), "stop-ms")
	b.ReportMetric(median(stopCPU), "stop-cpu-ms")
}

// benchFixedProfileRate sets the CPU profile's rate to
// BRIGHTER_BENCH_PROFILE_HZ samples a second when that is set (the
// default 100 leaves a start-up of a few milliseconds with no sample or
// one; the runtime then warns that the rate was set before the profile).
func benchFixedProfileRate() {
	if hz, err := strconv.Atoi(os.Getenv("BRIGHTER_BENCH_PROFILE_HZ")); err == nil && hz > 0 {
		runtime.SetCPUProfileRate(hz)
	}
}

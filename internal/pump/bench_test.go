package pump_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// benchBuffer is the batch size of the benchmarks: Brighter's maximum
// bufferSize.
const benchBuffer = 10

// benchChunk is how many messages are published (timer stopped) before
// each Run.
const benchChunk = 10000

// fill publishes n fresh messages to q, numbered from first.
func fill(b *testing.B, br *memory.Broker, q string, first, n int) {
	b.Helper()
	body := []byte(`{"n":1}`)
	for i := first; i < first+n; i++ {
		m := message.New("m"+strconv.Itoa(i), q, message.MTCommand, body)
		if err := br.Publish(context.Background(), q, m); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRun runs b.N messages through p over the queue "bench" of br, one
// chunk of benchChunk at a time (published with the timer stopped, then
// p.Run until the pump stops by itself), fails if any is left on the queue,
// and reports msgs/s over the time spent in Run and cpu-ns/msg, the process
// CPU time per message over the same spans.
func benchRun(b *testing.B, br *memory.Broker, p *pump.Pump) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed, cpu time.Duration
	var mallocs uint64
	// Chunks keep the backlog (and so the live heap) the size a
	// real consumer holds, not b.N messages: with everything
	// pre-published the run measures page faults of a growing heap.
	for done := 0; done < b.N; {
		n := min(benchChunk, b.N-done)
		b.StopTimer()
		fill(b, br, "bench", done, n)
		b.StartTimer()
		start, cpu0, m0 := time.Now(), processCPU(b), heapMallocs()
		if err := p.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		cpu += processCPU(b) - cpu0
		mallocs += heapMallocs() - m0
		done += n
	}
	b.StopTimer()
	if d := br.Depth("bench"); d != 0 {
		b.Fatalf("%d messages left on the queue", d)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/msg")
	checkAllocs(b, mallocs)
}

// recordedAllocs are the heap allocations per message docs/performance.md
// records for the pump benchmarks over the memory transport, counted while
// the pump runs (the transport's 2 per message included; the rest is per
// receive batch, such as the receive's deadline). allocs/op shows them
// rounded down.
//
// The Reactor's went from 2.6 to 2.71 when it began to settle through the
// settle batcher, as the Proactor did: the memory transport's
// AcknowledgeBatch returns a slice of errors, one allocation per batch.
// Both went down by 0.4 (to 2.31 and 2.32) when receives began to share
// their deadline context (run.receiveCtx): a context, its timer and its
// registration with the parent were four allocations per receive. What is
// left is the memory transport's (2 a message, its batch slice and its
// AcknowledgeBatch's errors).
var recordedAllocs = map[string]float64{
	"BenchmarkPump/reactor":                   2.31,
	"BenchmarkPump/proactor-2":                2.32,
	"BenchmarkPumpLeases/reactor/leases-off":  2.31,
	"BenchmarkPumpLeases/reactor/leases-on":   2.31,
	"BenchmarkPumpLeases/proactor/leases-off": 2.32,
	"BenchmarkPumpLeases/proactor/leases-on":  2.32,
}

// allocSlack is how far above its recorded figure a benchmark's count may
// be: one allocation per 20 messages (the count is the same from run to
// run to within 0.01).
const allocSlack = 0.05

// allocCheckEnv, set by `make bench`, makes a pump benchmark fail when it
// allocates more per message than recordedAllocs says (the
// Reactor once went from 2 to 6 allocations per message with nothing
// watching).
// CI runs no benchmarks.
const allocCheckEnv = "BRIGHTER_BENCH_ALLOC_CHECK"

// checkAllocs fails b, when allocCheckEnv is set and b ran at least a
// chunk, if mallocs (the heap allocations counted while the pump ran) per
// message exceed b's recorded figure; a benchmark with no recorded figure
// fails too, so a new one is recorded.
func checkAllocs(b *testing.B, mallocs uint64) {
	b.Helper()
	if os.Getenv(allocCheckEnv) == "" || b.N < benchChunk {
		return
	}
	want, ok := recordedAllocs[b.Name()]
	if !ok {
		b.Fatalf("%s has no recorded allocation figure: add it to recordedAllocs (internal/pump/bench_test.go) and docs/performance.md", b.Name())
	}
	b.ReportMetric(float64(mallocs)/float64(b.N), "heap-allocs/msg")
	if got := float64(mallocs) / float64(b.N); got > want+allocSlack {
		b.Fatalf("ALLOCATION REGRESSION: %s allocates %.2f times per message, the recorded figure is %.1f (docs/performance.md): find the new allocation with -memprofile, or record the new figure with its reason", b.Name(), got, want)
	}
}

// heapMallocs is the number of heap objects allocated so far.
func heapMallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// processCPU is the CPU time (user + system) the test process has used so
// far: cpu-ns/msg, unlike ns/op, does not count the time the pump's
// goroutines spend waiting for each other or for a core, so it varies less
// from run to run on a shared machine.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPump runs b.N messages through a pump over the memory transport
// with a no-op Ack handler and no observers. One op is one message: ns/op
// and allocs/op are per message, msgs/s is the throughput. The messages are
// published in chunks of benchChunk with the timer stopped; the pump stops
// by itself (MT_QUIT from StopWhenEmpty) once a chunk is acknowledged and
// is run again for the next. Compare allocs/op with
// BenchmarkMemoryReceive (internal/broker/memory) to read the pump's own
// allocations per message.
func BenchmarkPump(b *testing.B) {
	cases := []struct {
		name       string
		variant    pump.Variant
		performers int
	}{
		{"reactor", pump.Reactor, 1},
		{"proactor-2", pump.Proactor, 2},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			br := memory.NewBroker(false)
			c := br.NewConsumer(memory.ConsumerOptions{Queue: "bench", BufferSize: benchBuffer, StopWhenEmpty: true})
			p, err := pump.New(c, func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: pump.Ack}
			}, pump.Options{
				Subscription:   "bench",
				Variant:        tc.variant,
				NoOfPerformers: tc.performers,
				BufferSize:     benchBuffer,
				TimeOut:        10 * time.Millisecond,
				RequeueCount:   -1,
			})
			if err != nil {
				b.Fatal(err)
			}
			benchRun(b, br, p)
		})
	}
}

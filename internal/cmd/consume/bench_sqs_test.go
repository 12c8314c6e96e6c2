package consume_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// Settings of BenchmarkConsumeSQS (docs/performance.md): the queue size,
// and the subscription's bufferSize and noOfPerformers, which the plain loop
// matches (batch size and concurrency).
const (
	benchSQSMessages   = 20000
	benchSQSBuffer     = 10
	benchSQSPerformers = 4
	// benchSQSFillers is how many goroutines fill a queue (timer stopped).
	benchSQSFillers = 8
	// benchSQSPoll is how often the benchmark asks the queue whether it is
	// empty; it bounds the timing error of each run.
	benchSQSPoll = 20 * time.Millisecond
	// benchSQSDeadline bounds one run: a consumer that stalls fails the
	// benchmark instead of hanging it.
	benchSQSDeadline = 5 * time.Minute
	// benchSQSTrials is how many brighter/plain pairs one op runs; the
	// figures reported are medians over all pairs of all ops.
	benchSQSTrials = 3
	// benchSQSVisibility is both queues' visibility timeout. fauxqs now and
	// then loses a ReceiveMessage response on the client side (the SDK logs
	// "failed to discard remaining HTTP response body" and retries), leaving
	// that batch invisible until the timeout lapses; a short timeout bounds
	// the stall and the medians discard it.
	benchSQSVisibility = 5 * time.Second
)

// benchSmokeMessages is the messages per side of every consume benchmark's
// pair under make bench-smoke (BRIGHTER_BENCH_SMOKE set): enough to pass
// through every step, too few for a figure; one pair an op.
const benchSmokeMessages = 40

// benchSmoke reports whether BRIGHTER_BENCH_SMOKE is set: the benchmarks
// run to prove they still run, with benchSmokeMessages a side.
func benchSmoke() bool { return os.Getenv("BRIGHTER_BENCH_SMOKE") != "" }

// benchSQSBody is the body of every message: a 200-byte-class JSON event.
var benchSQSBody = []byte(`{"orderId":"4f1c2a9e-7b3d-4e8a-9c61-2d5f0b7e8a13","customer":"c-000042","lines":[{"sku":"A-1","qty":2},{"sku":"B-7","qty":1}],"total":"129.90","currency":"EUR","placedAt":"2026-11-30T12:00:00Z"}`)

// benchSQSCase is one sub-benchmark of BenchmarkConsumeSQS: a pump
// variant, a handler and a queue size.
type benchSQSCase struct {
	name     string
	variant  string        // messagePumpType
	handler  time.Duration // 0: the builtin ack through the CLI; else a Go handler taking this long, through the pump
	messages int
}

// benchSQSCases: the builtin ack handler through `brighter consume` (the
// user-facing figure, start-up included), and a 10 ms handler through the
// pump over the SQS consumer (no builtin handler takes time), each in both
// pump variants.
var benchSQSCases = []benchSQSCase{
	{name: "ack/proactor", variant: "proactor", messages: benchSQSMessages},
	{name: "ack/reactor", variant: "reactor", messages: benchSQSMessages},
	{name: "ack-1000/proactor", variant: "proactor", messages: benchSQSSmallMessages},
	{name: "ack-1000/reactor", variant: "reactor", messages: benchSQSSmallMessages},
	{name: "handler-10ms/proactor", variant: "proactor", handler: 10 * time.Millisecond, messages: benchSQSSlowMessages},
	{name: "handler-10ms/reactor", variant: "reactor", handler: 10 * time.Millisecond, messages: benchSQSSlowMessages},
}

// benchSQSSmallMessages is the queue size of the ack-1000 cases: the
// smallest queue the consume target is set for, where `brighter consume`'s
// start-up (reading the file, the SDK's configuration, looking the queue up
// and checking it) weighs most.
const benchSQSSmallMessages = 1000

// benchSQSSlowMessages is the queue size of the 10 ms handler cases: 5 s
// of handling on 4 performers.
const benchSQSSlowMessages = 2000

// BenchmarkConsumeSQS measures brighter's consume end to end on the fauxqs
// SQS emulator against a plain aws-sdk-go-v2 loop doing the least work that
// empties a queue (target ratio >= 0.9, docs/performance.md), and counts
// the billed SQS calls each makes per message on the wire.
//
// Start-up is timed on both sides of the ack cases: brighter's run starts
// with `brighter consume` reading its file and the AWS configuration, and
// the plain loop's with config.LoadDefaultConfig, its client and
// GetQueueUrl (benchSQSStartup), as a plain SDK program starts. ratio is
// brighter's throughput over that loop's; ratio-asym is over the loop timed
// from its first receive (its client made beforehand: the anchor before
// 2026-12-05 22:00), plain-startup-ms the loop's start-up (to its
// GetQueueUrl answered) and brighter-startup-ms brighter's (to its last
// start-up call answered, validate's GetQueueAttributes).
//
// Sub-benchmarks (benchSQSCases): ack/{proactor,reactor} (20,000 messages)
// and ack-1000/{proactor,reactor} (1,000) run `brighter
// consume` (transport sqs, builtin ack handler, bufferSize 10,
// noOfPerformers 4, timeOut 1s) through run(); handler-10ms/{proactor,
// reactor} run the pump over the SQS consumer with a handler that sleeps
// 10 ms, and the plain loop sleeps 10 ms per message too. One op runs
// benchSQSTrials pairs. Each pair fills two queues with identical messages
// in Brighter's SQS wire format (timer stopped), then runs brighter on one
// and 4 goroutines of ReceiveMessage(MaxNumberOfMessages 10,
// WaitTimeSeconds 1, no attributes asked for) + DeleteMessageBatch on the
// other, each timed from its start until its last delete was answered
// (read from the counting proxy once GetQueueAttributes, polled every
// benchSQSPoll, reports its queue empty), then stopped by cancelling its
// context. Which of the two goes first alternates.
//
// Both sides reach the emulator through a counting proxy (faultproxy.Counter),
// which counts each SQS action by its X-Amz-Target; the depth polls go
// around it. Reported, as medians over every pair: brighter-msgs/s,
// plain-msgs/s, ratio (brighter / plain, per pair), min-ratio (the worst
// pair), and per message: brighter-calls/msg and plain-calls/msg (every
// SQS call made during the run, start-up included), brighter-recv/msg,
// brighter-del/msg (DeleteMessage and DeleteMessageBatch) and
// brighter-vis/msg (ChangeMessageVisibility and its batch); and the CPU each
// side used (this process, the counting proxy included: user + system),
// brighter-cpu-us/msg, plain-cpu-us/msg and cpu-per-msg-ratio (brighter's
// over the loop's, per pair, both start-ups included; the target is <= 1.1)
// and cpu-ratio-asym (over the loop's without its start-up); in the ack
// cases, each side's stop, which those CPU figures include:
// brighter-stop-ms (from the cancel until `brighter consume` returned: its
// drain lets the receives in flight end, up to timeOut), and the CPU a
// message each side used meanwhile, brighter-stop-cpu-us/msg and
// plain-stop-cpu-us/msg (the loop cancels its receives); and the heap
// allocations each side made (the process's, the proxy's included; the
// garbage collector's work follows them): brighter-allocs/msg,
// plain-allocs/msg, brighter-B/msg, plain-B/msg. It starts its
// own emulator, so it needs `npm ci` (make bench runs it), and it never runs
// without -bench.
func BenchmarkConsumeSQS(b *testing.B) {
	ctx := context.Background()
	emu, err := sqstest.Start(ctx)
	if err != nil {
		b.Fatalf("start the SQS emulator: %v", err)
	}
	b.Cleanup(emu.Stop)
	// The CLI reads credentials through the SDK's normal chain: give it
	// static ones and keep any local AWS files out of the way.
	dir := b.TempDir()
	benchSQSEnv(b, dir)

	clients := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	counter := startSQSCounter(b, emu.Endpoint)
	counted := sqs.NewClientsFromConfig(sqstest.Config(), counter.URL())
	for _, tc := range benchSQSCases {
		if benchSmoke() {
			tc.messages = benchSmokeMessages
		}
		b.Run(tc.name, func(b *testing.B) {
			benchSQSCaseRun(b, tc, dir, clients, counted, counter)
		})
	}
}

// benchSQSCaseRun runs b.N ops of benchSQSTrials pairs of tc and reports
// its metrics (see BenchmarkConsumeSQS).
func benchSQSCaseRun(b *testing.B, tc benchSQSCase, dir string, clients, counted *sqs.Clients, counter *faultproxy.Counter) {
	var brighterTook, plainTook, ratios, asymRatios, bCalls, pCalls, bRecv, bDel, bVis, bCPU, pCPU, cpuRatios, cpuAsymRatios, pStartup, bStartup, bAllocs, pAllocs, bBytes, pBytes []float64
	var bStop, bStopCPU, pStopCPU []float64 // the ack cases only
	per := func(n int) float64 { return float64(n) / float64(tc.messages) }
	trials := benchSQSTrials
	if benchSmoke() {
		trials = 1
	}
	b.ResetTimer()
	for i := range b.N {
		for trial := range trials {
			b.StopTimer()
			tag := fmt.Sprintf("%d-%d-%d", time.Now().UnixNano()%1e9, i, trial)
			bName, pName := "bench-brighter-"+tag, "bench-plain-"+tag
			bURL := benchSQSFill(b, clients.SQS, bName, tc.messages)
			pURL := benchSQSFill(b, clients.SQS, pName, tc.messages)
			b.StartTimer()
			var bt, bstart, bcpu, pcpu time.Duration
			var br benchSQSBrighterRun
			var balloc, palloc benchAllocs
			var pr benchSQSPlainRun
			var bc, pc map[string]int
			brighter := func() {
				counter.Reset()
				cpu, mem := benchProcessCPU(b), benchReadAllocs()
				defer func() { bcpu, balloc = benchProcessCPU(b)-cpu, benchReadAllocs().since(mem) }()
				if tc.handler == 0 {
					br = benchSQSBrighter(b, clients.SQS, counter, bURL, benchSQSConfig(b, dir, counter.URL(), bName, tc.variant))
					bt, bstart = br.took, br.startup
				} else {
					bt = benchSQSPump(b, clients.SQS, counter, counted, bName, bURL, tc)
				}
				bc = counter.Reset()
			}
			plain := func() {
				counter.Reset()
				cpu, mem := benchProcessCPU(b), benchReadAllocs()
				defer func() { pcpu, palloc = benchProcessCPU(b)-cpu, benchReadAllocs().since(mem) }()
				if tc.handler == 0 {
					// `brighter consume` starts up inside its timer: so does the
					// plain program (its configuration, client and queue URL).
					pr = benchSQSPlain(b, clients.SQS, counter, nil, pURL, tc.handler, &benchSQSStartup{endpoint: counter.URL(), queue: pName})
				} else {
					pr = benchSQSPlain(b, clients.SQS, counter, counted.SQS, pURL, tc.handler, nil)
				}
				pc = counter.Reset()
			}
			benchPair((i*trials+trial)%2 == 0, brighter, plain)
			pt := pr.took
			b.Logf("trial %d.%d: brighter %s (start-up %s; %s), plain loop %s (start-up %s; %s) for %d messages each", i, trial,
				bt.Round(time.Millisecond), bstart.Round(10*time.Microsecond), faultproxy.CallsText(bc), pt.Round(time.Millisecond), pr.startup.Round(10*time.Microsecond), faultproxy.CallsText(pc), tc.messages)
			brighterTook = append(brighterTook, bt.Seconds())
			plainTook = append(plainTook, pt.Seconds())
			ratios = append(ratios, pt.Seconds()/bt.Seconds())
			asymRatios = append(asymRatios, (pt-pr.startup).Seconds()/bt.Seconds())
			pStartup = append(pStartup, float64(pr.startup.Microseconds())/1000)
			bStartup = append(bStartup, float64(bstart.Microseconds())/1000)
			bAllocs = append(bAllocs, float64(balloc.mallocs)/float64(tc.messages))
			pAllocs = append(pAllocs, float64(palloc.mallocs)/float64(tc.messages))
			bBytes = append(bBytes, float64(balloc.bytes)/float64(tc.messages))
			pBytes = append(pBytes, float64(palloc.bytes)/float64(tc.messages))
			bCPU = append(bCPU, float64(bcpu.Microseconds())/float64(tc.messages))
			pCPU = append(pCPU, float64(pcpu.Microseconds())/float64(tc.messages))
			cpuRatios = append(cpuRatios, bcpu.Seconds()/pcpu.Seconds())
			cpuAsymRatios = append(cpuAsymRatios, bcpu.Seconds()/(pcpu-pr.startupCPU).Seconds())
			if tc.handler == 0 {
				bStop = append(bStop, float64(br.stop.Microseconds())/1000)
				bStopCPU = append(bStopCPU, float64(br.stopCPU.Microseconds())/float64(tc.messages))
				pStopCPU = append(pStopCPU, float64(pr.stopCPU.Microseconds())/float64(tc.messages))
			}
			bCalls = append(bCalls, per(faultproxy.Sum(bc)))
			pCalls = append(pCalls, per(faultproxy.Sum(pc)))
			bRecv = append(bRecv, per(bc["ReceiveMessage"]))
			bDel = append(bDel, per(bc["DeleteMessage"]+bc["DeleteMessageBatch"]))
			bVis = append(bVis, per(bc["ChangeMessageVisibility"]+bc["ChangeMessageVisibilityBatch"]))
		}
	}
	b.StopTimer()
	b.ReportMetric(median(bCPU), "brighter-cpu-us/msg")
	b.ReportMetric(median(pCPU), "plain-cpu-us/msg")
	b.ReportMetric(median(cpuRatios), "cpu-per-msg-ratio")
	b.ReportMetric(median(cpuAsymRatios), "cpu-ratio-asym")
	if len(bStop) > 0 {
		b.ReportMetric(median(bStop), "brighter-stop-ms")
		b.ReportMetric(median(bStopCPU), "brighter-stop-cpu-us/msg")
		b.ReportMetric(median(pStopCPU), "plain-stop-cpu-us/msg")
	}
	b.ReportMetric(median(pStartup), "plain-startup-ms")
	b.ReportMetric(median(bStartup), "brighter-startup-ms")
	b.ReportMetric(median(bAllocs), "brighter-allocs/msg")
	b.ReportMetric(median(pAllocs), "plain-allocs/msg")
	b.ReportMetric(median(bBytes), "brighter-B/msg")
	b.ReportMetric(median(pBytes), "plain-B/msg")
	b.ReportMetric(float64(tc.messages)/median(brighterTook), "brighter-msgs/s")
	b.ReportMetric(float64(tc.messages)/median(plainTook), "plain-msgs/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(slices.Min(ratios), "min-ratio")
	b.ReportMetric(median(asymRatios), "ratio-asym")
	b.ReportMetric(median(bCalls), "brighter-calls/msg")
	b.ReportMetric(median(pCalls), "plain-calls/msg")
	b.ReportMetric(median(bRecv), "brighter-recv/msg")
	b.ReportMetric(median(bDel), "brighter-del/msg")
	b.ReportMetric(median(bVis), "brighter-vis/msg")
}

// startSQSCounter starts a counting proxy (faultproxy.StartSQSCounter) to
// endpoint, closed when b ends.
func startSQSCounter(b *testing.B, endpoint string) *faultproxy.Counter {
	b.Helper()
	c, err := faultproxy.StartSQSCounter(endpoint)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// benchPair runs one pair of a benchmark: brighter first when
// brighterFirst, else plain first (the order alternates from pair to pair,
// so that neither side always finds the emulator warm). Each side runs
// under a profiler label (side=brighter or side=plain), which the
// goroutines it starts inherit: a -cpuprofile splits by it (go tool pprof
// -tagfocus side=brighter). The labels miss what runs outside either
// side's goroutines but inside its CPU figure (the counting proxy, the
// garbage collector, the scheduler): with BRIGHTER_BENCH_SIDE_PROFILE set
// to a directory (and no -test.cpuprofile), each side's run writes a CPU
// profile of the whole process to DIR/SIDE-NANOS.prof instead, which
// `go tool pprof DIR/brighter-*.prof` merges.
func benchPair(brighterFirst bool, brighter, plain func()) {
	if brighterFirst {
		benchSide("brighter", brighter)
		benchSide("plain", plain)
	} else {
		benchSide("plain", plain)
		benchSide("brighter", brighter)
	}
}

// benchSide runs f, one side of a benchmark's round, under the profiler
// label side=SIDE, and with BRIGHTER_BENCH_SIDE_PROFILE set, with a CPU
// profile of the whole process written for it (benchPair).
func benchSide(side string, f func()) {
	if dir := os.Getenv("BRIGHTER_BENCH_SIDE_PROFILE"); dir != "" {
		defer benchSideProfile(dir, side)()
	}
	pprof.Do(context.Background(), pprof.Labels("side", side), func(context.Context) { f() })
}

// benchSideProfile starts a CPU profile of the whole process into
// dir/side-NANOS.prof and returns the function that stops it. It does
// nothing (and returns a no-op) when the file cannot be made or another
// profile runs (-test.cpuprofile).
func benchSideProfile(dir, side string) (stop func()) {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.prof", side, time.Now().UnixNano())))
	if err != nil {
		return func() {}
	}
	if hz, err := strconv.Atoi(os.Getenv("BRIGHTER_BENCH_SIDE_PROFILE_HZ")); err == nil && hz > 0 {
		// Set before StartCPUProfile, which then keeps it (and says on
		// stderr that it cannot set its own 100 Hz): a side's run of a few
		// seconds gives a few hundred samples at 100 Hz. The profile's
		// figures are scaled as for 100 Hz: read its proportions.
		runtime.SetCPUProfileRate(hz)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

// benchProcessCPU is the CPU time (user + system) this process has used so
// far: brighter's side or the plain loop's, whichever runs, with the counting
// proxy both go through (the emulator is a process of its own).
func benchProcessCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchAllocs is this process's heap allocations so far (count and bytes),
// its goroutine scheduling events (sched: the count of the runtime's
// /sched/latencies:seconds, the times a goroutine made runnable was run,
// of which the runtime records one in eight or so: a measure of hand-offs
// between goroutines, comparable between two runs of one binary, not a
// count) and its garbage collections (gcs), or these between two readings.
type benchAllocs struct{ mallocs, bytes, sched, gcs uint64 }

// benchReadAllocs reads the process's allocations so far (the runtime's
// MemStats: every goroutine's, the counting proxy's included).
func benchReadAllocs() benchAllocs {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	ss := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(ss)
	var sched uint64
	if ss[0].Value.Kind() == metrics.KindFloat64Histogram {
		for _, c := range ss[0].Value.Float64Histogram().Counts {
			sched += c
		}
	}
	return benchAllocs{mallocs: ms.Mallocs, bytes: ms.TotalAlloc, sched: sched, gcs: uint64(ms.NumGC)}
}

// since is a's allocations after an earlier reading.
func (a benchAllocs) since(earlier benchAllocs) benchAllocs {
	return benchAllocs{mallocs: a.mallocs - earlier.mallocs, bytes: a.bytes - earlier.bytes,
		sched: a.sched - earlier.sched, gcs: a.gcs - earlier.gcs}
}

// median returns the median of xs (not empty); it sorts xs.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// benchSQSFill creates queue name and fills it with n messages encoded by
// sqs.EncodeSQS, ten per SendMessageBatch (n a multiple of ten). It returns
// the queue URL.
func benchSQSFill(b *testing.B, c *awssqs.Client, name string, n int) string {
	b.Helper()
	ctx := context.Background()
	out, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		string(types.QueueAttributeNameVisibilityTimeout): strconv.Itoa(int(benchSQSVisibility / time.Second)),
	}})
	if err != nil {
		b.Fatalf("CreateQueue %s: %v", name, err)
	}
	url := aws.ToString(out.QueueUrl)
	var wg sync.WaitGroup
	errs := make([]error, benchSQSFillers)
	batches := make(chan int)
	for w := range benchSQSFillers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = benchSQSSend(ctx, c, name, url, batches)
		}()
	}
	for first := 0; first < n; first += benchSQSBuffer {
		batches <- first
	}
	close(batches)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	if got := benchSQSDepth(b, c, url); got != n {
		b.Fatalf("queue %s holds %d messages after the fill, want %d", name, got, n)
	}
	return url
}

// benchSQSSend sends a batch of benchSQSBuffer messages for each first index
// it reads from batches, until batches is closed. After a failure it keeps
// draining batches (so the sender never blocks) and returns the failure.
func benchSQSSend(ctx context.Context, c *awssqs.Client, name, url string, batches <-chan int) error {
	var failure error
	for first := range batches {
		if failure != nil {
			continue
		}
		failure = benchSQSSendBatch(ctx, c, name, url, first)
	}
	return failure
}

// benchSQSSendBatch sends messages first..first+9 to the queue with one
// SendMessageBatch.
func benchSQSSendBatch(ctx context.Context, c *awssqs.Client, name, url string, first int) error {
	entries := make([]types.SendMessageBatchRequestEntry, 0, benchSQSBuffer)
	for j := first; j < first+benchSQSBuffer; j++ {
		m := message.New(name+"-"+strconv.Itoa(j), name, message.MTEvent, benchSQSBody)
		m.Header.ContentType = "application/json"
		o, err := sqs.EncodeSQS(m, url, nil)
		if err != nil {
			return fmt.Errorf("encode message %d: %w", j, err)
		}
		attrs := make(map[string]types.MessageAttributeValue, len(o.Attributes))
		for k, v := range o.Attributes {
			attrs[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
		entries = append(entries, types.SendMessageBatchRequestEntry{
			Id: aws.String(strconv.Itoa(j)), MessageBody: aws.String(o.Body), MessageAttributes: attrs,
		})
	}
	res, err := c.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
	if err != nil {
		return fmt.Errorf("SendMessageBatch to %s: %w", name, err)
	}
	if len(res.Failed) > 0 {
		return fmt.Errorf("SendMessageBatch to %s: %d entries failed, first: %s", name, len(res.Failed), aws.ToString(res.Failed[0].Message))
	}
	return nil
}

// benchSQSDepth returns ApproximateNumberOfMessages +
// ApproximateNumberOfMessagesNotVisible of the queue.
func benchSQSDepth(b *testing.B, c *awssqs.Client, url string) int {
	b.Helper()
	out, err := c.GetQueueAttributes(context.Background(), &awssqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		b.Fatalf("GetQueueAttributes %s: %v", url, err)
	}
	n := 0
	for _, k := range []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	} {
		v, err := strconv.Atoi(out.Attributes[string(k)])
		if err != nil {
			b.Fatalf("GetQueueAttributes %s: %s = %q: %v", url, k, out.Attributes[string(k)], err)
		}
		n += v
	}
	return n
}

// benchSQSWaitEmpty polls the queue every benchSQSPoll until it is empty and
// returns the time from start until the counting proxy last answered a
// DeleteMessageBatch or DeleteMessage (the run's last acknowledgement; both sides delete
// through counter, which was reset at their start), so that the poll's
// period does not round the figure; the time to the poll that saw the
// queue empty when no delete went through counter. It fails the benchmark
// when the queue is not empty within benchSQSDeadline or failed returns a
// reason.
func benchSQSWaitEmpty(b *testing.B, c *awssqs.Client, counter *faultproxy.Counter, url string, start time.Time, failed func() string) time.Duration {
	b.Helper()
	deadline := start.Add(benchSQSDeadline)
	tick := time.NewTicker(benchSQSPoll)
	defer tick.Stop()
	for {
		if n := benchSQSDepth(b, c, url); n == 0 {
			last := counter.Answered("DeleteMessageBatch")
			if one := counter.Answered("DeleteMessage"); one.After(last) {
				last = one
			}
			if last.After(start) {
				return last.Sub(start)
			}
			return time.Since(start)
		} else if time.Now().After(deadline) {
			b.Fatalf("queue %s still holds %d messages after %s", url, n, benchSQSDeadline)
		}
		if msg := failed(); msg != "" {
			b.Fatal(msg)
		}
		<-tick.C
	}
}

// benchSQSConfig writes the subscriptions file of the brighter run and
// returns its path.
func benchSQSConfig(b *testing.B, dir, endpoint, queue, variant string) string {
	b.Helper()
	cfg := fmt.Sprintf(`connections:
  aws:
    region: %s
    endpoint: %s
subscriptions:
  - name: bench
    transport: sqs
    channelName: %s
    messagePumpType: %s
    bufferSize: %d
    noOfPerformers: %d
    timeOut: 1s
    requeueCount: -1
    makeChannels: validate
    handler: {type: builtin, name: ack}
    sqs: {visibilityTimeout: %s}
`, sqstest.Region, endpoint, queue, variant, benchSQSBuffer, benchSQSPerformers, benchSQSVisibility)
	path := filepath.Join(dir, queue+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchSQSBrighterRun is what one run of `brighter consume` took: took from
// its start to its last delete answered, startup to its last start-up call
// answered, and its stop: from the cancel to run's return (stop; its drain
// lets the receives in flight end, up to timeOut) and this process's CPU
// time (user + system) meanwhile (stopCPU), which the side's CPU figure
// includes.
type benchSQSBrighterRun struct {
	took, startup, stop, stopCPU time.Duration
}

// benchSQSBrighter runs `brighter consume --config cfg` until the queue at
// url is empty, stops it by cancelling its context, and returns the time to
// empty, its start-up (the time to its last GetQueueAttributes answered:
// makeChannels validate's, the last call before its receives; 0 when it
// made none) and its stop. It fails the benchmark when consume exits early
// or not with 0, or logs an error.
func benchSQSBrighter(b *testing.B, c *awssqs.Client, counter *faultproxy.Counter, url, cfg string) benchSQSBrighterRun {
	b.Helper()
	stderr := &cmdtest.LockedBuffer{}
	streams := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: stderr, Getenv: os.LookupEnv}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var exited atomic.Bool
	code := make(chan int, 1)
	start := time.Now()
	go func() {
		code <- run(ctx, streams, []string{"consume", "--config", cfg})
		exited.Store(true)
	}()
	var r benchSQSBrighterRun
	r.took = benchSQSWaitEmpty(b, c, counter, url, start, func() string {
		if exited.Load() {
			return "brighter consume exited before the queue was empty; stderr:\n" + stderr.String()
		}
		return ""
	})
	if at := counter.Answered("GetQueueAttributes"); at.After(start) {
		r.startup = at.Sub(start)
	}
	stopAt, stopCPU := time.Now(), benchProcessCPU(b)
	cancel()
	got := <-code
	r.stop, r.stopCPU = time.Since(stopAt), benchProcessCPU(b)-stopCPU
	if got != cmdutil.ExitOK {
		b.Fatalf("brighter consume exited with %d; stderr:\n%s", got, stderr.String())
	}
	if s := stderr.String(); strings.Contains(s, "level=ERROR") {
		b.Fatalf("brighter consume logged an error:\n%s", s)
	}
	return r
}

// benchSQSStartup is the start-up of a plain SDK program, timed with its
// run: config.LoadDefaultConfig (the environment's credentials and
// AWS_CA_BUNDLE, as `brighter consume` reads them), its client to endpoint
// and GetQueueUrl of queue.
type benchSQSStartup struct {
	endpoint, queue string
}

// benchSQSPlainRun is what one run of the plain loop took: took from its
// start (its start-up included) to its last delete answered, startup the
// part before its first receive, and startupCPU and stopCPU this process's
// CPU time (user + system) during that start-up and during its stop (from
// the cancel until its goroutines returned).
type benchSQSPlainRun struct {
	took, startup, startupCPU, stopCPU time.Duration
}

// benchSQSPlain runs benchSQSPerformers goroutines of ReceiveMessage
// (MaxNumberOfMessages 10, WaitTimeSeconds 1), a sleep of handler per
// message, then DeleteMessageBatch, on the queue at url until it is empty
// (polled through poll), and returns the time to empty. With su nil it
// uses c, made beforehand; with su set it starts up first, inside its timer,
// as a plain program does: config.LoadDefaultConfig, its client (c is
// ignored) and GetQueueUrl. It fails the benchmark when a call fails.
func benchSQSPlain(b *testing.B, poll *awssqs.Client, counter *faultproxy.Counter, c *awssqs.Client, url string, handler time.Duration, su *benchSQSStartup) benchSQSPlainRun {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		wg      sync.WaitGroup
		errMu   sync.Mutex
		firstEr error
	)
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if firstEr == nil {
			firstEr = err
		}
	}
	var run benchSQSPlainRun
	loopURL := url
	start := time.Now()
	if su != nil {
		cpu := benchProcessCPU(b)
		cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(sqstest.Region))
		if err != nil {
			b.Fatalf("plain loop: load AWS configuration: %v", err)
		}
		// The same client as brighter's (sqs.NewClientsFromConfig: the
		// request body shield), so that only the start-up differs from the
		// loop's client made beforehand.
		c = sqs.NewClientsFromConfig(cfg, su.endpoint).SQS
		out, err := c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(su.queue)})
		if err != nil {
			b.Fatalf("plain loop: GetQueueUrl %s: %v", su.queue, err)
		}
		loopURL = aws.ToString(out.QueueUrl)
		run.startup = time.Since(start)
		run.startupCPU = benchProcessCPU(b) - cpu
	}
	for range benchSQSPerformers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entries := make([]types.DeleteMessageBatchRequestEntry, 0, benchSQSBuffer)
			for ctx.Err() == nil {
				in := &awssqs.ReceiveMessageInput{
					QueueUrl: aws.String(loopURL), MaxNumberOfMessages: benchSQSBuffer, WaitTimeSeconds: 1,
				}
				out, err := c.ReceiveMessage(ctx, in)
				if err != nil {
					if ctx.Err() == nil {
						fail(fmt.Errorf("ReceiveMessage: %w", err))
					}
					return
				}
				if len(out.Messages) == 0 {
					continue
				}
				if handler > 0 {
					time.Sleep(handler * time.Duration(len(out.Messages)))
				}
				entries = entries[:0]
				for i, m := range out.Messages {
					entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
				}
				res, err := c.DeleteMessageBatch(context.WithoutCancel(ctx), &awssqs.DeleteMessageBatchInput{QueueUrl: aws.String(loopURL), Entries: entries})
				if err != nil {
					fail(fmt.Errorf("DeleteMessageBatch: %w", err))
					return
				}
				if len(res.Failed) > 0 {
					fail(fmt.Errorf("DeleteMessageBatch: %d entries failed, first: %s", len(res.Failed), aws.ToString(res.Failed[0].Message)))
					return
				}
			}
		}()
	}
	run.took = benchSQSWaitEmpty(b, poll, counter, url, start, func() string {
		errMu.Lock()
		defer errMu.Unlock()
		if firstEr != nil {
			return "plain loop: " + firstEr.Error()
		}
		return ""
	})
	stopCPU := benchProcessCPU(b)
	cancel()
	wg.Wait()
	run.stopCPU = benchProcessCPU(b) - stopCPU
	if firstEr != nil {
		b.Fatalf("plain loop: %v", firstEr)
	}
	return run
}

// benchSQSPump runs the pump (tc.variant, bufferSize 10, noOfPerformers 4,
// timeOut 1s, requeueCount -1) over an SQS consumer of queue name through
// counted, with a handler that sleeps tc.handler then acknowledges, until
// the queue at url is empty (polled through poll); then it stops the pump
// and returns the time to empty.
func benchSQSPump(b *testing.B, poll *awssqs.Client, counter *faultproxy.Counter, counted *sqs.Clients, name, url string, tc benchSQSCase) time.Duration {
	b.Helper()
	logs := &cmdtest.LockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	start := time.Now()
	k, err := sqs.NewConsumer(counted, sqs.ConsumerOptions{Queue: name, BufferSize: benchSQSBuffer, VisibilityTimeout: benchSQSVisibility, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	h := func(ctx context.Context, m *message.Message) pump.Result {
		time.Sleep(tc.handler)
		return pump.Result{Outcome: pump.Ack}
	}
	p, err := pump.New(k, h, pump.Options{
		Subscription: "bench", Variant: pump.Variant(tc.variant), NoOfPerformers: benchSQSPerformers,
		BufferSize: benchSQSBuffer, TimeOut: time.Second, RequeueCount: -1,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var exited atomic.Bool
	runErr := make(chan error, 1)
	go func() {
		runErr <- p.Run(ctx)
		exited.Store(true)
	}()
	took := benchSQSWaitEmpty(b, poll, counter, url, start, func() string {
		if exited.Load() {
			return "the pump stopped before the queue was empty; logs:\n" + logs.String()
		}
		return ""
	})
	cancel()
	if err := <-runErr; err != nil {
		b.Fatalf("pump: %v; logs:\n%s", err, logs.String())
	}
	if err := k.Close(context.Background()); err != nil {
		b.Fatalf("close the consumer: %v", err)
	}
	return took
}

// benchSQSEnv gives the SDK's credential chain, which brighter reads as
// any program does, static credentials and keeps the machine's AWS files
// and instance metadata out of the way (dir holds the empty stand-ins).
func benchSQSEnv(b *testing.B, dir string) {
	b.Helper()
	b.Setenv("AWS_ACCESS_KEY_ID", "test")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	b.Setenv("AWS_SESSION_TOKEN", "")
	b.Setenv("AWS_PROFILE", "")
	b.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "aws-config"))
	b.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "aws-credentials"))
	b.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

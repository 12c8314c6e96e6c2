package inspect_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// seedMany puts n routed copies (Brighter's wire format, as the Router
// writes them) on queue with SendMessageBatch, 16 batches at a time.
func seedMany(b testing.TB, c *sqs.Clients, queue, origin string, n int) {
	b.Helper()
	ctx := context.Background()
	u, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		b.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		next atomic.Int64
		fail atomic.Value
	)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(10)) - 10
				if start >= n {
					return
				}
				var entries []types.SendMessageBatchRequestEntry
				for i := start; i < min(start+10, n); i++ {
					m := message.New(fmt.Sprintf("bench-%d", i), origin, message.MTEvent, []byte(`{"orderId":`+strconv.Itoa(i)+`,"pad":"`+strings.Repeat("x", 200)+`"}`))
					m.Header.HandledCount = 3
					r := message.Stamp(m, queue, message.Rejection{Reason: message.ReasonDeliveryError, Description: "order " + strconv.Itoa(i) + " timed out"}, time.Now())
					out, err := sqs.EncodeSQS(r, *u.QueueUrl, nil)
					if err != nil {
						fail.Store(err)
						return
					}
					attrs := map[string]types.MessageAttributeValue{}
					for k, v := range out.Attributes {
						attrs[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
					}
					entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(out.Body), MessageAttributes: attrs})
				}
				// Entries the emulator refused are sent again (a batch can
				// succeed in part), a few times at most.
				for try := 0; len(entries) > 0; try++ {
					out, err := c.SQS.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: u.QueueUrl, Entries: entries})
					if err != nil {
						fail.Store(err)
						return
					}
					if len(out.Failed) > 0 && try == 4 {
						fail.Store(fmt.Errorf("%d entries refused 5 times: %s", len(out.Failed), aws.ToString(out.Failed[0].Message)))
						return
					}
					refused := map[string]bool{}
					for _, f := range out.Failed {
						refused[aws.ToString(f.Id)] = true
					}
					entries = slices.DeleteFunc(entries, func(e types.SendMessageBatchRequestEntry) bool { return !refused[aws.ToString(e.Id)] })
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := fail.Load().(error); err != nil {
		b.Fatalf("seed %s: %v", queue, err)
	}
}

const replayN = 5000

// replayPairs is how many brighter / plain-loop pairs one iteration of
// BenchmarkDLQReplay5000 runs, alternating which goes first.
const replayPairs = 3

// BenchmarkDLQReplay5000 compares `brighter dlq replay` (inspect.Replay over
// the ordinary SQS consumer and producer, as the command builds them) with a
// plain aws-sdk-go-v2 loop of ReceiveMessage(10) / SendMessage /
// DeleteMessage over the same emulator, in the same run: replayPairs pairs
// of 5,000 dead-lettered messages each, alternating which goes first, and
// reports the median pair ratio. Target: brighter >= 0.8 of the
// plain loop's messages per second (reported, not asserted: a loaded
// machine must not fail `make bench`).
//
// The plain loop is given every advantage a script could have: its time
// ends at its last move, where Replay's includes finding out that the queue
// is empty (empty receives of DefaultWait, 1 s, at least two).
//
//	go test -run '^$' -bench DLQReplay -benchtime 1x ./internal/inspect
func BenchmarkDLQReplay5000(b *testing.B) {
	c := clients(b)
	var ratios, mine, plain []float64
	for b.Loop() {
		for pair := range replayPairs {
			runs := []func() float64{func() float64 { return replayBrighter(b, c) }, func() float64 { return replayPlain(b, c) }}
			var rates [2]float64
			for k := range 2 {
				i := (k + pair) % 2 // alternate which goes first
				rates[i] = runs[i]()
			}
			mine, plain = append(mine, rates[0]), append(plain, rates[1])
			ratios = append(ratios, rates[0]/rates[1])
		}
	}
	med := func(xs []float64) float64 {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	ratio := med(ratios)
	b.ReportMetric(med(mine), "msgs/s-brighter")
	b.ReportMetric(med(plain), "msgs/s-plain-sdk")
	b.ReportMetric(ratio, "ratio")
	b.Logf("median ratio %.2f (pairs %.2f); brighter %.0f msgs/s, plain loop %.0f msgs/s (medians)", ratio, ratios, med(mine), med(plain))
	if ratio < 0.8 {
		b.Logf("BELOW TARGET: replay reached %.2f of the plain loop; the target is >= 0.8", ratio)
	}
}

// replayBrighter seeds a fresh DLQ with replayN routed copies (untimed) and
// returns the messages per second inspect.Replay moved them at.
func replayBrighter(b *testing.B, c *sqs.Clients) float64 {
	b.StopTimer()
	dest, dlq := uniq("bench-dest"), uniq("bench-dlq")
	makeQueues(b, c, dest, dlq, false)
	seedMany(b, c, dlq, dest, replayN)
	src := &inspect.Source{Consumer: reader(b, c, dlq, false), Name: "sqs://" + dlq, Wait: inspect.DefaultWait, Logger: discardLogger()}
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	b.StartTimer()
	start := time.Now()
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{})
	el := time.Since(start)
	if err != nil || sum.Replayed != replayN {
		b.Fatalf("%+v %v", sum, err)
	}
	return float64(replayN) / el.Seconds()
}

// replayPlain seeds a fresh DLQ with replayN routed copies (untimed) and
// returns the messages per second a bare SDK loop moved them at, timed to
// its last move (no final empty receive is charged to it). It uses the
// same clients as Replay (with sqs's bodyShield: without it, about one
// receive answer in 150 was lost to "use of closed network connection" and
// its ten messages stayed invisible).
func replayPlain(b *testing.B, c *sqs.Clients) float64 {
	ctx := context.Background()
	b.StopTimer()
	dest, dlq := uniq("bench-dest"), uniq("bench-dlq")
	makeQueues(b, c, dest, dlq, false)
	seedMany(b, c, dlq, dest, replayN)
	du, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(dlq)})
	if err != nil {
		b.Fatal(err)
	}
	tu, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(dest)})
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	start := time.Now()
	last := start
	moved := 0
	for empty := 0; moved < replayN && empty < 2; {
		out, err := c.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: du.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageAttributeNames: []string{"All"}, VisibilityTimeout: 120})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Messages) == 0 {
			empty++
			continue
		}
		empty = 0
		for _, m := range out.Messages {
			if _, err := c.SQS.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: tu.QueueUrl, MessageBody: m.Body, MessageAttributes: m.MessageAttributes}); err != nil {
				b.Fatal(err)
			}
			if _, err := c.SQS.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: du.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
				b.Fatal(err)
			}
			moved++
			last = time.Now()
		}
	}
	if moved != replayN {
		b.Fatalf("plain loop moved %d of %d", moved, replayN)
	}
	return float64(moved) / last.Sub(start).Seconds()
}

const peekN = 50000

// BenchmarkDLQPeek50000 peeks 50,000 dead-lettered messages as JSON lines
// (to io.Discard) and reports the process's peak resident memory during the
// peek (VmRSS sampled every 20 ms from /proc/self/status, after the seeding
// garbage was returned with debug.FreeOSMemory). Target: under
// 64 MiB.
func BenchmarkDLQPeek50000(b *testing.B) {
	c := clients(b)
	dlq := uniq("bench-peek")
	makeQueues(b, c, dlq, "", false)
	seedMany(b, c, dlq, "orders", peekN)
	b.ResetTimer()
	for range b.N {
		debug.FreeOSMemory()
		base := rssBytes()
		stop := make(chan struct{})
		var peak, peakHeap, peakLive atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				if r := rssBytes(); r > peak.Load() {
					peak.Store(r)
				}
				h, l := heapBytes()
				if h > peakHeap.Load() {
					peakHeap.Store(h)
				}
				if l > peakLive.Load() {
					peakLive.Store(l)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		src := &inspect.Source{Consumer: reader(b, c, dlq, false), Name: "sqs://" + dlq, Wait: time.Second, Logger: discardLogger()}
		counts, err := inspect.Peek(context.Background(), src, inspect.Filter{}, inspect.NewJSONLines(io.Discard))
		close(stop)
		<-done
		if err != nil || counts.Selected != peekN {
			b.Fatalf("%+v %v", counts, err)
		}
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(base)/(1<<20), "start-RSS-MiB")
		b.ReportMetric(float64(peakHeap.Load())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(peakLive.Load())/(1<<20), "peak-live-MiB")
	}
}

// heapBytes reads the runtime's heap object bytes (live and not yet swept)
// and the live heap marked by the last GC.
func heapBytes() (objects, live int64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// rssBytes reads VmRSS of this process (0 where /proc is missing).
func rssBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

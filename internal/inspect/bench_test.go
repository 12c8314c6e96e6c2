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

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// routedCopy is the benchmarks' dead-lettered message i: an event from
// origin with a 200-byte body, handled three times, stamped with a delivery
// error as the Router writes it to queue.
func routedCopy(i int, queue, origin string) *message.Message {
	m := message.New(fmt.Sprintf("bench-%d", i), origin, message.MTEvent, []byte(`{"orderId":`+strconv.Itoa(i)+`,"pad":"`+strings.Repeat("x", 200)+`"}`))
	m.Header.HandledCount = 3
	return message.Stamp(m, queue, message.Rejection{Reason: message.ReasonDeliveryError, Description: "order " + strconv.Itoa(i) + " timed out"}, time.Now())
}

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
					out, err := sqs.EncodeSQS(routedCopy(i, queue, origin), *u.QueueUrl, nil)
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

package inspect_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// The DLQ verb benchmarks (BenchmarkDLQReplay, BenchmarkDLQArchive,
// BenchmarkDLQRestore, BenchmarkDLQPurge) each compare one `brighter dlq`
// verb, run as the command runs it (inspect over the ordinary SQS consumer
// and producer, ShortPoll set as the SQS dlq reader sets it), with a plain
// batched aws-sdk-go-v2 loop doing the same job, in the same run:
// dlqBenchPairs pairs of dlqBenchN messages, alternating which side goes
// first, each side on its own fresh queues seeded untimed. Each reports the
// median pair ratio (brighter's messages per second over the loop's; target
// >= 0.95, reported, not asserted) and the billed SQS calls per message of
// each side, counted on the wire by a faultproxy.Counter in front of the
// emulator (medians).
//
// A plain scanning loop receives with ReceiveMessage(10, WaitTimeSeconds 1)
// and stops at its first empty receive: it finds out by itself that the
// queue is empty, with the least an SQS client can do to know (one long poll
// that returns nothing), as the command must.
//
// With BRIGHTER_BENCH_SMOKE set (make bench-smoke) each runs one pair of
// dlqSmokeN messages: it checks that the benchmark still runs, not its
// speed.
//
//	go test -run '^$' -bench 'DLQ(Replay|Archive|Restore|Purge)$' -benchtime 1x ./internal/inspect
const (
	dlqBenchN     = 5000
	dlqBenchPairs = 3
	dlqSmokeN     = 30
)

// dlqBenchSize is the messages per side and pairs per iteration: dlqBenchN
// and dlqBenchPairs, or one pair of dlqSmokeN with BRIGHTER_BENCH_SMOKE set.
func dlqBenchSize() (n, pairs int) {
	if os.Getenv("BRIGHTER_BENCH_SMOKE") != "" {
		return dlqSmokeN, 1
	}
	return dlqBenchN, dlqBenchPairs
}

// dlqSide prepares one side of a pair (untimed: queues, seeding, files) on
// the plain clients c and returns the timed work, which talks to the
// emulator through the counted clients cc only, and a check run after it
// (untimed) that fails b unless the work was done (read from the emulator,
// never from the answers the work got).
type dlqSide func(b *testing.B, c, cc *sqs.Clients, n int) (work func(), check func())

// runDLQPairs runs the pairs of one benchmark and reports its metrics.
func runDLQPairs(b *testing.B, verb string, mine, plain dlqSide) {
	c := clients(b)
	ctr, err := faultproxy.StartSQSCounter(endpoint)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ctr.Close)
	cc := sqs.NewClientsFromConfig(sqstest.Config(), ctr.URL())
	n, pairs := dlqBenchSize()
	var rates [2][]float64
	var calls [2][]float64
	var pairRatios []float64
	defer func() {
		if b.Failed() {
			// A side stopped the run (b.Fatal): the calls of its timed part
			// tell a lost receive answer (a ReceiveMessage more than the
			// receives that brought messages) from a scan that ended early.
			b.Logf("%s: calls counted before the failure: %s", verb, faultproxy.CallsText(ctr.Reset()))
		}
	}()
	sides := [2]dlqSide{mine, plain}
	names := [2]string{"brighter", "plain"}
	for b.Loop() {
		for pair := range pairs {
			var r [2]float64
			var text [2]string
			for k := range 2 {
				i := (k + pair) % 2 // alternate which goes first
				b.StopTimer()
				work, check := sides[i](b, c, cc, n)
				ctr.Reset()
				b.StartTimer()
				start := time.Now()
				work()
				el := time.Since(start)
				b.StopTimer()
				// Where the work ended: its last remove (or, for
				// restore, its last send); the rest of el is the proof
				// that the queue is empty.
				last := ctr.Answered("DeleteMessageBatch")
				if last.IsZero() {
					last = ctr.Answered("SendMessageBatch")
				}
				counted := ctr.Reset()
				check()
				b.StartTimer()
				r[i] = float64(n) / el.Seconds()
				rates[i] = append(rates[i], r[i])
				calls[i] = append(calls[i], float64(faultproxy.Sum(counted))/float64(n))
				text[i] = fmt.Sprintf("%s in %s, last move at %s", faultproxy.CallsText(counted), el.Round(time.Millisecond), last.Sub(start).Round(time.Millisecond))
			}
			pairRatios = append(pairRatios, r[0]/r[1])
			b.Logf("%s pair %d: ratio %.2f; brighter %.0f msgs/s (%s); plain %.0f msgs/s (%s)", verb, pair, r[0]/r[1], r[0], text[0], r[1], text[1])
		}
	}
	med := func(xs []float64) float64 {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	ratio := med(pairRatios)
	b.ReportMetric(ratio, "ratio")
	for i, name := range names {
		b.ReportMetric(med(rates[i]), "msgs/s-"+name)
		b.ReportMetric(med(calls[i]), "calls/msg-"+name)
	}
	b.Logf("%s of %d: median ratio %.2f (pairs %.2f); brighter %.0f msgs/s, %.3f calls/msg; plain loop %.0f msgs/s, %.3f calls/msg (medians)",
		verb, n, ratio, pairRatios, med(rates[0]), med(calls[0]), med(rates[1]), med(calls[1]))
	if ratio < 0.95 {
		b.Logf("BELOW TARGET: %s reached %.2f of the plain loop; the target is >= 0.95", verb, ratio)
	}
}

// BenchmarkDLQReplay: `dlq replay` (inspect.Replay: per receive, one
// SendMessageBatch then one DeleteMessageBatch of what was published,
// four workers) against a plain loop of ReceiveMessage(10) /
// SendMessageBatch / DeleteMessageBatch. See runDLQPairs.
func BenchmarkDLQReplay(b *testing.B) {
	runDLQPairs(b, "replay", replayMine, func(b *testing.B, c, cc *sqs.Clients, n int) (func(), func()) {
		dest, dlq := dlqQueues(b, c, n, true)
		tu := queueURL(b, cc, dest)
		return func() {
				plainScan(b, cc, dlq, func(ms []types.Message) []types.Message {
					entries := make([]types.SendMessageBatchRequestEntry, len(ms))
					for i, m := range ms {
						entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: m.Body, MessageAttributes: m.MessageAttributes}
					}
					out, err := cc.SQS.SendMessageBatch(context.Background(), &awssqs.SendMessageBatchInput{QueueUrl: tu, Entries: entries})
					if err != nil || len(out.Failed) > 0 {
						b.Fatalf("send batch: %v %+v", err, out)
					}
					return ms
				})
			}, func() {
				moved(b, c, dlq, dest, n)
			}
	})
}

// replayMine is the brighter side of BenchmarkDLQReplay.
func replayMine(b *testing.B, c, cc *sqs.Clients, n int) (func(), func()) {
	dest, dlq := dlqQueues(b, c, n, true)
	src := &inspect.Source{Consumer: reader(b, cc, dlq, false), Name: "sqs://" + dlq, Wait: inspect.DefaultWait, ShortPoll: true, Logger: discardLogger()}
	p := sqs.NewProducer(cc, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	return func() {
			sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{})
			if err != nil || sum.Replayed != n {
				b.Fatalf("replay: %+v %v", sum, err)
			}
		}, func() {
			moved(b, c, dlq, dest, n)
		}
}

// BenchmarkDLQArchive: `dlq archive` (inspect.Archive into a file: per
// receive, JSON lines written, flushed and fsynced, then one
// DeleteMessageBatch, overlapped with the next receive) against a plain
// loop of ReceiveMessage(10) / a JSON line per message (body and
// attributes) / flush and fsync / DeleteMessageBatch. See runDLQPairs.
func BenchmarkDLQArchive(b *testing.B) {
	runDLQPairs(b, "archive", func(b *testing.B, c, cc *sqs.Clients, n int) (func(), func()) {
		_, dlq := dlqQueues(b, c, n, false)
		src := &inspect.Source{Consumer: reader(b, cc, dlq, false), Name: "sqs://" + dlq, Wait: inspect.DefaultWait, ShortPoll: true, Logger: discardLogger()}
		fh := benchFile(b)
		return func() {
				sum, err := inspect.Archive(context.Background(), src, inspect.Filter{}, fh, fh.Sync)
				if err != nil || sum.Archived != n {
					b.Fatalf("archive: %+v %v", sum, err)
				}
			}, func() {
				emptied(b, c, dlq)
				lines(b, fh.Name(), n)
			}
	}, func(b *testing.B, c, cc *sqs.Clients, n int) (func(), func()) {
		_, dlq := dlqQueues(b, c, n, false)
		fh := benchFile(b)
		w := bufio.NewWriter(fh)
		return func() {
				plainScan(b, cc, dlq, func(ms []types.Message) []types.Message {
					for _, m := range ms {
						r := plainRecord{Body: aws.ToString(m.Body), Attrs: map[string]string{}}
						for k, v := range m.MessageAttributes {
							r.Attrs[k] = aws.ToString(v.StringValue)
						}
						line, err := json.Marshal(r)
						if err != nil {
							b.Fatal(err)
						}
						_, _ = w.Write(append(line, '\n'))
					}
					if err := w.Flush(); err != nil {
						b.Fatal(err)
					}
					if err := fh.Sync(); err != nil {
						b.Fatal(err)
					}
					return ms
				})
			}, func() {
				emptied(b, c, dlq)
				lines(b, fh.Name(), n)
			}
	})
}

// BenchmarkDLQPurge: `dlq purge` (inspect.Archive to io.Discard with no
// sync: per receive, one DeleteMessageBatch, overlapped with the next
// receive) against a plain loop of ReceiveMessage(10) /
// DeleteMessageBatch. See runDLQPairs.
func BenchmarkDLQPurge(b *testing.B) {
	runDLQPairs(b, "purge", func(b *testing.B, c, cc *sqs.Clients, n int) (func(), func()) {
		_, dlq := dlqQueues(b, c, n, false)
		src := &inspect.Source{Consumer: reader(b, cc, dlq, false), Name: "sqs://" + dlq, Wait: inspect.DefaultWait, ShortPoll: true, Logger: discardLogger()}
		return func() {
				sum, err := inspect.Archive(context.Background(), src, inspect.Filter{}, io.Discard, nil)
				if err != nil || sum.Archived != n {
					b.Fatalf("purge: %+v %v", sum, err)
				}
			}, func() {
				emptied(b, c, dlq)
			}
	}, func(b *testing.B, c, cc *sqs.Clients, n int) (func(), func()) {
		_, dlq := dlqQueues(b, c, n, false)
		return func() {
				plainScan(b, cc, dlq, func(ms []types.Message) []types.Message { return ms })
			}, func() {
				emptied(b, c, dlq)
			}
	})
}

// BenchmarkDLQRestore: `dlq restore` (inspect.ReadArchive of an archive
// file, then inspect.Restore: SendMessageBatch of ten, up to four at once)
// against a plain loop that reads a file of the same messages' SQS bodies
// and attributes, a JSON line each, and sends them with SendMessageBatch of
// ten, one at a time. Both files are written untimed. See runDLQPairs.
func BenchmarkDLQRestore(b *testing.B) {
	runDLQPairs(b, "restore", func(b *testing.B, c, cc *sqs.Clients, n int) (func(), func()) {
		dest := uniq("bench-rest")
		makeQueues(b, c, dest, "", false)
		fh := benchFile(b)
		w := bufio.NewWriter(fh)
		for i := range n {
			line, err := message.MarshalRecordJSON(routedCopy(i, "orders-dlq", "orders"))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = w.Write(append(line, '\n'))
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		p := sqs.NewProducer(cc, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
		return func() {
				rf, err := os.Open(fh.Name())
				if err != nil {
					b.Fatal(err)
				}
				ms, err := inspect.ReadArchive(rf, fh.Name())
				rf.Close()
				if err != nil {
					b.Fatal(err)
				}
				sum, err := inspect.Restore(context.Background(), p, ms, dest, discardLogger(), nil)
				if err != nil || sum.Restored != n {
					b.Fatalf("restore: %+v %v", sum, err)
				}
			}, func() {
				holds(b, c, dest, n)
			}
	}, func(b *testing.B, c, cc *sqs.Clients, n int) (func(), func()) {
		dest := uniq("bench-rest")
		makeQueues(b, c, dest, "", false)
		u := queueURL(b, c, dest)
		fh := benchFile(b)
		w := bufio.NewWriter(fh)
		for i := range n {
			out, err := sqs.EncodeSQS(routedCopy(i, "orders-dlq", "orders"), aws.ToString(u), nil)
			if err != nil {
				b.Fatal(err)
			}
			line, err := json.Marshal(plainRecord{Body: out.Body, Attrs: out.Attributes})
			if err != nil {
				b.Fatal(err)
			}
			_, _ = w.Write(append(line, '\n'))
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		return func() {
				sendPlainFile(b, cc, fh.Name(), dest, n)
			}, func() {
				holds(b, c, dest, n)
			}
	})
}

// dlqQueues makes a fresh DLQ holding n routed copies (and, with dest, a
// fresh destination queue they name as their original topic); it returns
// both names ("" for no destination).
func dlqQueues(b *testing.B, c *sqs.Clients, n int, withDest bool) (dest, dlq string) {
	dlq = uniq("bench-dlq")
	origin := "orders"
	if withDest {
		dest = uniq("bench-dest")
		origin = dest
		makeQueues(b, c, dest, dlq, false)
	} else {
		makeQueues(b, c, dlq, "", false)
	}
	seedMany(b, c, dlq, origin, n)
	return dest, dlq
}

// queueURL looks queue up through c.
func queueURL(b *testing.B, c *sqs.Clients, queue string) *string {
	u, err := c.SQS.GetQueueUrl(context.Background(), &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		b.Fatal(err)
	}
	return u.QueueUrl
}

// plainScan is a plain SDK scanning loop over queue: ReceiveMessage(10,
// WaitTimeSeconds 1, every attribute), handle, then one
// DeleteMessageBatch of what handle returns, until the first empty
// receive.
func plainScan(b *testing.B, cc *sqs.Clients, queue string, handle func([]types.Message) []types.Message) {
	ctx := context.Background()
	u := queueURL(b, cc, queue)
	for {
		out, err := cc.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: u, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageAttributeNames: []string{"All"}, VisibilityTimeout: 120})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return
		}
		done := handle(out.Messages)
		if len(done) == 0 {
			continue
		}
		del := make([]types.DeleteMessageBatchRequestEntry, len(done))
		for i, m := range done {
			del[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
		}
		if out, err := cc.SQS.DeleteMessageBatch(ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: u, Entries: del}); err != nil || len(out.Failed) > 0 {
			b.Fatalf("delete batch: %v %+v", err, out)
		}
	}
}

// sendPlainFile sends file's lines (plainRecord) to dest with
// SendMessageBatch, ten at a time, one call at a time.
func sendPlainFile(b *testing.B, cc *sqs.Clients, file, dest string, n int) {
	ctx := context.Background()
	u := queueURL(b, cc, dest)
	fh, err := os.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	sent := 0
	var batch []types.SendMessageBatchRequestEntry
	flush := func() {
		if len(batch) == 0 {
			return
		}
		out, err := cc.SQS.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: u, Entries: batch})
		if err != nil || len(out.Failed) > 0 {
			b.Fatalf("send batch: %v %+v", err, out)
		}
		sent += len(batch)
		batch = batch[:0]
	}
	for sc.Scan() {
		var r plainRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			b.Fatal(err)
		}
		attrs := make(map[string]types.MessageAttributeValue, len(r.Attrs))
		for k, v := range r.Attrs {
			attrs[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
		batch = append(batch, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(len(batch))), MessageBody: aws.String(r.Body), MessageAttributes: attrs})
		if len(batch) == 10 {
			flush()
		}
	}
	flush()
	if sent != n {
		b.Fatalf("plain restore sent %d of %d", sent, n)
	}
}

// benchFile is a fresh file in b's temporary directory, open for writing
// (append) and closed when b ends.
func benchFile(b *testing.B) *os.File {
	fh, err := os.OpenFile(filepath.Join(b.TempDir(), "dlq.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fh.Close() })
	return fh
}

// moved fails b unless dlq is empty and dest holds n messages.
func moved(b *testing.B, c *sqs.Clients, dlq, dest string, n int) {
	emptied(b, c, dlq)
	holds(b, c, dest, n)
}

// emptied fails b unless queue holds nothing (visible, in flight or
// delayed), then deletes it.
func emptied(b *testing.B, c *sqs.Clients, queue string) {
	if d := depth(b, c, queue); d != 0 {
		b.Fatalf("%s still holds %d", queue, d)
	}
	dropQueue(b, c, queue)
}

// holds fails b unless queue holds n messages, all visible, then deletes
// it.
func holds(b *testing.B, c *sqs.Clients, queue string, n int) {
	if v := visible(b, c, queue); v != n {
		b.Fatalf("%s has %d visible, want %d", queue, v, n)
	}
	dropQueue(b, c, queue)
}

// dropQueue deletes queue once a side is checked: the emulator (one Node
// process) would otherwise hold every side's 5,000 messages to the end of
// the run, and its growing heap slowed whichever side of a pair ran second
// (restore pairs swung from 1.15 to 0.31 with the order).
func dropQueue(b *testing.B, c *sqs.Clients, queue string) {
	if _, err := c.SQS.DeleteQueue(context.Background(), &awssqs.DeleteQueueInput{QueueUrl: queueURL(b, c, queue)}); err != nil {
		b.Fatalf("delete %s: %v", queue, err)
	}
}

// lines fails b unless file has n lines.
func lines(b *testing.B, file string, n int) {
	fh, err := os.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	k := 0
	for sc.Scan() {
		k++
	}
	if k != n {
		b.Fatalf("%s has %d lines, want %d", file, k, n)
	}
}

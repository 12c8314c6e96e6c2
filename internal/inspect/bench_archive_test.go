package inspect_test

import (
	"bufio"
	"context"
	"encoding/json"
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
	"github.com/brightergo/brighter/internal/inspect"
)

const archiveN = 10000

// archivePairs is how many brighter / plain-loop pairs one iteration of
// BenchmarkDLQArchiveRestore10000 runs, alternating which goes first.
const archivePairs = 3

// BenchmarkDLQArchiveRestore10000 compares `brighter dlq archive` and `dlq
// restore` (inspect.Archive over the ordinary SQS consumer into a file,
// fsynced per receive before the removes, the end proved as the command proves
// it: an empty 1 s long poll confirmed by an empty short poll;
// inspect.ReadArchive then inspect.Restore with the SQS producer's
// SendMessageBatch, up to four batches at once) with a plain aws-sdk-go-v2
// loop doing the same work over the same emulator, in the same run:
//
//   - archive: ReceiveMessage(10, WaitTimeSeconds 1) -> one JSON line per
//     message (body and attributes) -> flush and fsync ->
//     DeleteMessageBatch, until a receive comes back empty (archivePlain).
//     The ratio is against the plain loop timed to that first empty
//     receive: a loop that finds out by itself that the queue is empty, as
//     the command must. Also reported: timed to its last delete (a loop
//     told the count in advance) and to a second empty long poll.
//   - restore: read the file's lines, SendMessageBatch of 10, one batch at
//     a time.
//
// archivePairs pairs of 10,000 dead-lettered messages each; it reports the
// median ratio per operation. Target: brighter >= 0.8 of the plain loop's
// messages per second (reported, not asserted).
//
//	go test -run '^$' -bench DLQArchiveRestore -benchtime 1x -count 3 ./internal/inspect
func BenchmarkDLQArchiveRestore10000(b *testing.B) {
	c := clients(b)
	var (
		archMine, archEmpty, archDelete, archTwo []float64
		archR, archRDelete, archRTwo             []float64
		restMine, restPlain, restR               []float64
	)
	rate := func(d time.Duration) float64 { return float64(archiveN) / d.Seconds() }
	for b.Loop() {
		for pair := range archivePairs {
			dir := b.TempDir()
			mineFile, plainFile := filepath.Join(dir, "brighter.jsonl"), filepath.Join(dir, "plain.jsonl")
			var (
				mine float64
				pt   plainTimes
			)
			archive := []func(){
				func() { mine = archiveBrighter(b, c, mineFile) },
				func() { pt = archivePlain(b, c, plainFile) },
			}
			restore := []func() float64{
				func() float64 { return restoreBrighter(b, c, mineFile) },
				func() float64 { return restorePlain(b, c, plainFile) },
			}
			var r [2]float64
			for k := range 2 {
				archive[(k+pair)%2]()
			}
			for k := range 2 {
				i := (k + pair) % 2
				r[i] = restore[i]()
			}
			archMine = append(archMine, mine)
			archEmpty = append(archEmpty, rate(pt.firstEmpty))
			archDelete = append(archDelete, rate(pt.lastDelete))
			archTwo = append(archTwo, rate(pt.secondEmpty))
			archR = append(archR, mine/rate(pt.firstEmpty))
			archRDelete = append(archRDelete, mine/rate(pt.lastDelete))
			archRTwo = append(archRTwo, mine/rate(pt.secondEmpty))
			restMine, restPlain, restR = append(restMine, r[0]), append(restPlain, r[1]), append(restR, r[0]/r[1])
		}
	}
	med := func(xs []float64) float64 {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	b.ReportMetric(med(archMine), "archive-msgs/s-brighter")
	b.ReportMetric(med(archEmpty), "archive-msgs/s-plain-sdk")
	b.ReportMetric(med(archR), "archive-ratio")
	b.ReportMetric(med(archDelete), "archive-msgs/s-plain-sdk-to-last-delete")
	b.ReportMetric(med(archRDelete), "archive-ratio-to-last-delete")
	b.ReportMetric(med(archTwo), "archive-msgs/s-plain-sdk-to-second-empty")
	b.ReportMetric(med(archRTwo), "archive-ratio-to-second-empty")
	b.ReportMetric(med(restMine), "restore-msgs/s-brighter")
	b.ReportMetric(med(restPlain), "restore-msgs/s-plain-sdk")
	b.ReportMetric(med(restR), "restore-ratio")
	b.Logf("archive: median ratio %.2f (pairs %.2f), brighter %.0f msgs/s, plain to its first empty receive %.0f msgs/s; plain to its last delete: ratio %.2f (pairs %.2f), %.0f msgs/s; plain to a second empty long poll: ratio %.2f (pairs %.2f), %.0f msgs/s",
		med(archR), archR, med(archMine), med(archEmpty), med(archRDelete), archRDelete, med(archDelete), med(archRTwo), archRTwo, med(archTwo))
	b.Logf("restore: median ratio %.2f (pairs %.2f), brighter %.0f msgs/s, plain %.0f msgs/s", med(restR), restR, med(restMine), med(restPlain))
}

// archiveBrighter seeds a fresh DLQ (untimed) and returns the messages per
// second inspect.Archive moved into file.
func archiveBrighter(b *testing.B, c *sqs.Clients, file string) float64 {
	b.StopTimer()
	dlq := uniq("bench-arch")
	makeQueues(b, c, dlq, "", false)
	seedMany(b, c, dlq, "orders", archiveN)
	src := &inspect.Source{Consumer: reader(b, c, dlq, false), Name: "sqs://" + dlq, Wait: inspect.DefaultWait, ShortPoll: true, Logger: discardLogger()}
	fh, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	b.StartTimer()
	start := time.Now()
	sum, err := inspect.Archive(context.Background(), src, inspect.Filter{}, fh, fh.Sync)
	el := time.Since(start)
	if err != nil || sum.Archived != archiveN {
		b.Fatalf("%+v %v", sum, err)
	}
	return float64(archiveN) / el.Seconds()
}

// plainRecord is the plain loop's archive line: the SQS body and attributes.
type plainRecord struct {
	Body  string            `json:"body"`
	Attrs map[string]string `json:"attrs"`
}

// plainTimes is when a plain archive loop got where, from its start.
type plainTimes struct {
	// lastDelete is its last DeleteMessageBatch's return: the clock of a
	// loop told in advance how many messages there are.
	lastDelete time.Duration
	// firstEmpty is its first empty 1 s long poll's return: the clock of a
	// loop that, as the command must, finds out by itself that it is done,
	// with the least an SQS client can do to know (one long poll that
	// returns nothing; a short poll samples only some servers).
	firstEmpty time.Duration
	// secondEmpty is a second empty 1 s long poll's return, as the scan did
	// before it ended at the first empty answer of a quiet queue.
	secondEmpty time.Duration
}

// archivePlain seeds a fresh DLQ (untimed) and archives it with a bare SDK
// loop: ReceiveMessage(10, WaitTimeSeconds 1) -> a JSON line per message ->
// flush and fsync -> DeleteMessageBatch, until two receives in a row come
// back empty. It returns when it got where (plainTimes).
func archivePlain(b *testing.B, c *sqs.Clients, file string) plainTimes {
	ctx := context.Background()
	b.StopTimer()
	dlq := uniq("bench-arch")
	makeQueues(b, c, dlq, "", false)
	seedMany(b, c, dlq, "orders", archiveN)
	u, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(dlq)})
	if err != nil {
		b.Fatal(err)
	}
	fh, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	w := bufio.NewWriter(fh)
	b.StartTimer()
	start := time.Now()
	var t plainTimes
	moved := 0
	for empty := 0; empty < 2; {
		out, err := c.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: u.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageAttributeNames: []string{"All"}, VisibilityTimeout: 120})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Messages) == 0 {
			if empty++; empty == 1 {
				t.firstEmpty = time.Since(start)
			} else {
				t.secondEmpty = time.Since(start)
			}
			continue
		}
		empty = 0
		var del []types.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			r := plainRecord{Body: aws.ToString(m.Body), Attrs: map[string]string{}}
			for k, v := range m.MessageAttributes {
				r.Attrs[k] = aws.ToString(v.StringValue)
			}
			line, err := json.Marshal(r)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = w.Write(append(line, '\n'))
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := fh.Sync(); err != nil {
			b.Fatal(err)
		}
		if _, err := c.SQS.DeleteMessageBatch(ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: u.QueueUrl, Entries: del}); err != nil {
			b.Fatal(err)
		}
		moved += len(out.Messages)
		t.lastDelete = time.Since(start)
	}
	if moved != archiveN {
		b.Fatalf("plain loop archived %d of %d", moved, archiveN)
	}
	return t
}

// restoreBrighter publishes file's messages (read with ReadArchive, timed)
// to a fresh queue with inspect.Restore and returns messages per second.
func restoreBrighter(b *testing.B, c *sqs.Clients, file string) float64 {
	b.StopTimer()
	dest := uniq("bench-rest")
	makeQueues(b, c, dest, "", false)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	b.StartTimer()
	start := time.Now()
	fh, err := os.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	ms, err := inspect.ReadArchive(fh, file)
	fh.Close()
	if err != nil {
		b.Fatal(err)
	}
	sum, err := inspect.Restore(context.Background(), p, ms, dest, discardLogger(), nil)
	el := time.Since(start)
	if err != nil || sum.Restored != archiveN {
		b.Fatalf("%+v %v", sum, err)
	}
	return float64(archiveN) / el.Seconds()
}

// restorePlain publishes the plain archive's lines to a fresh queue with
// SendMessageBatch, ten at a time, and returns messages per second.
func restorePlain(b *testing.B, c *sqs.Clients, file string) float64 {
	ctx := context.Background()
	b.StopTimer()
	dest := uniq("bench-rest")
	makeQueues(b, c, dest, "", false)
	u, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(dest)})
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	start := time.Now()
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
		out, err := c.SQS.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: u.QueueUrl, Entries: batch})
		if err != nil || len(out.Failed) > 0 {
			b.Fatalf("send batch: %v %v", err, out)
		}
		sent += len(batch)
		batch = batch[:0]
	}
	for sc.Scan() {
		var r plainRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			b.Fatal(err)
		}
		attrs := map[string]types.MessageAttributeValue{}
		for k, v := range r.Attrs {
			attrs[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
		batch = append(batch, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(len(batch))), MessageBody: aws.String(r.Body), MessageAttributes: attrs})
		if len(batch) == 10 {
			flush()
		}
	}
	flush()
	el := time.Since(start)
	if sent != archiveN {
		b.Fatalf("plain restore sent %d of %d", sent, archiveN)
	}
	return float64(sent) / el.Seconds()
}

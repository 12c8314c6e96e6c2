package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// sqsEndpoint is the fauxqs emulator this test binary started;
// sqsBatchEndpoint is the sqstest.FIFOBatcher in front of it
// (Setup.FIFOBatches).
var sqsEndpoint, sqsBatchEndpoint string

func init() {
	emulators = append(emulators, func() (func(), error) {
		emu, err := sqstest.Start(context.Background())
		if err != nil {
			return nil, fmt.Errorf("SQS conformance needs fauxqs: %w", err)
		}
		sqsEndpoint = emu.Endpoint
		batcher, err := sqstest.StartFIFOBatcher(emu.Endpoint)
		if err != nil {
			emu.Stop()
			return nil, err
		}
		sqsBatchEndpoint = batcher.Endpoint()
		return func() { batcher.Close(); emu.Stop() }, nil
	})
}

// sqsFixture is one of the four AWS configurations of docs/requirements.md
// (SqsStandard, SqsFifo, SnsStandard, SnsFifo), on fauxqs, with Brighter's
// default raw delivery for the SNS subscriptions.
type sqsFixture struct {
	config string
	sns    bool
	fifo   bool
	seq    atomic.Int64
}

func (f *sqsFixture) Transport() string     { return "SQS" }
func (f *sqsFixture) Configuration() string { return f.config }
func (f *sqsFixture) Ordered() bool         { return f.fifo }

// LongPolls reports true: a receive waits up to the pump's timeOut, at
// most 20 s (longPollFixture).
func (f *sqsFixture) LongPolls() bool { return true }

// BatchesGroups reports true for FIFO queues: opened with
// Setup.FIFOBatches, the channel is served through sqstest.FIFOBatcher,
// whose receive returns every waiting message of a group.
func (f *sqsFixture) BatchesGroups() bool { return f.fifo }

// HoldsToACeiling reports true: SQS keeps a message from other consumers
// at most 12 hours from its receive (Setup.HoldCeiling shortens it).
func (f *sqsFixture) HoldsToACeiling() bool { return true }

func sqsFixtures() []*sqsFixture {
	return []*sqsFixture{
		{config: "SqsStandard"},
		{config: "SqsFifo", fifo: true},
		{config: "SnsStandard", sns: true},
		{config: "SnsFifo", sns: true, fifo: true},
	}
}

// defaultSQSLease is long enough that no visibility timeout lapses during a
// behaviour unless it asks for a short one.
const defaultSQSLease = 30 * time.Second

type sqsChannel struct {
	lease      time.Duration
	f          *sqsFixture
	c          *sqs.Clients
	opts       sqs.ChannelOptions
	logger     Setup
	dlq, inv   string
	native     string
	routingKey string
	healed     atomic.Bool // HealDeadLetter created the dead-letter queue
}

func (f *sqsFixture) Open(t *testing.T, s Setup) Channel {
	t.Helper()
	endpoint := sqsEndpoint
	if s.FIFOBatches && f.fifo {
		endpoint = sqsBatchEndpoint
	}
	c := sqs.NewClientsFromConfig(sqstest.Config(), endpoint)
	base := fmt.Sprintf("conf-%s-%d-%d", strings.ToLower(f.config), time.Now().UnixNano()%1_000_000_000, f.seq.Add(1))
	ch := &sqsChannel{f: f, c: c, logger: s}
	lease := s.Lease
	if lease == 0 {
		lease = defaultSQSLease
	}
	ch.lease = lease
	ch.opts = sqs.ChannelOptions{Queue: base, Fifo: f.fifo, VisibilityTimeout: lease}
	if f.sns {
		ch.opts.Topic = base + ".topic"
	}
	if s.DeadLetter {
		ch.dlq = base + "-dlq"
		ch.opts.DeadLetter = ch.dlq
	}
	if s.MissingDeadLetter {
		ch.dlq = base + "-missing-dlq" // configured on the consumer, never created
	}
	if s.DeadLetterDown {
		ch.dlq = base + "-dlq" // configured on the consumer, created by HealDeadLetter
	}
	if s.Invalid {
		ch.inv = base + "-invalid"
		ch.opts.Invalid = ch.inv
	}
	if s.NativeMaxDeliveries > 0 {
		ch.native = base + "-native"
		ch.opts.RedrivePolicy = &sqs.RedrivePolicy{DeadLetterQueue: ch.native, MaxReceiveCount: s.NativeMaxDeliveries}
	}
	if err := sqs.NewChannelMaker(c, ch.opts).EnsureChannels(t.Context()); err != nil {
		t.Fatalf("make channels: %v", err)
	}
	ch.routingKey = base
	if f.sns {
		ch.routingKey = ch.opts.Topic
	}
	return ch
}

func (ch *sqsChannel) consumer(t testing.TB, queue string, bufferSize int, routed bool) broker.Consumer {
	t.Helper()
	o := sqs.ConsumerOptions{Queue: queue, Fifo: ch.f.fifo, BufferSize: bufferSize, Logger: ch.logger.Logger}
	if queue == ch.opts.Queue {
		// As consume does: the receive asks for the channel's visibility
		// timeout, so the pump knows the lease and keeps it (ADR 0005).
		o.VisibilityTimeout = ch.opts.VisibilityTimeout
		o.MaxHold = ch.logger.HoldCeiling
	}
	if routed {
		o.DeadLetter, o.Invalid = ch.dlq, ch.inv
	}
	k, err := sqs.NewConsumer(ch.c, o)
	if err != nil {
		t.Fatalf("new consumer: %v", err)
	}
	return k
}

func (ch *sqsChannel) Consumer(t testing.TB, bufferSize int) broker.Consumer {
	return ch.consumer(t, ch.opts.Queue, bufferSize, true)
}

// CopyCanExceedLimit reports whether a message at the source's limit has a
// routed copy over the dead-letter queue's: a queue takes SQS's 1 MiB; an
// SNS topic takes 256 KiB, so no message published through it can have a
// copy over a queue's 1 MiB.
func (f *sqsFixture) CopyCanExceedLimit() bool { return !f.sns }

// PadToLimit pads m's body so that its SendMessage request is exactly SQS's
// 1 MiB: body plus each attribute's name, data type ("String") and value.
func (ch *sqsChannel) PadToLimit(t testing.TB, m *message.Message) {
	t.Helper()
	m.Header.Topic = ch.routingKey
	u, err := ch.c.SQS.GetQueueUrl(t.Context(), &awssqs.GetQueueUrlInput{QueueName: aws.String(sqs.QueueName(ch.opts.Queue, ch.f.fifo))})
	if err != nil {
		t.Fatalf("queue url: %v", err)
	}
	padBody(t, m, limits.SQS.MaxMessageBytes, func() int {
		out, err := sqs.EncodeSQS(m, aws.ToString(u.QueueUrl), nil)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		n := len(out.Body)
		for k, v := range out.Attributes {
			n += len(k) + len("String") + len(v)
		}
		return n
	})
}

func (ch *sqsChannel) Send(t testing.TB, m *message.Message) {
	t.Helper()
	m.Header.Topic = ch.routingKey
	p := sqs.NewProducer(ch.c, sqs.ProducerOptions{SNS: ch.f.sns, Fifo: ch.f.fifo, MakeChannels: broker.MakeValidate})
	if err := p.Send(context.Background(), m); err != nil {
		t.Fatalf("send: %v", err)
	}
}

func (ch *sqsChannel) reader(t testing.TB, q string) broker.Consumer {
	if q == "" {
		return nil
	}
	return ch.consumer(t, q, 10, false)
}

func (ch *sqsChannel) DeadLetter(t testing.TB) broker.Consumer {
	if ch.healed.Load() {
		return ch.reader(t, ch.dlq)
	}
	return ch.reader(t, ch.opts.DeadLetter)
}

// HealDeadLetter creates the dead-letter queue a Setup.DeadLetterDown
// channel routes to (makeChannels create, as consume would on a restart).
func (ch *sqsChannel) HealDeadLetter(t testing.TB) {
	t.Helper()
	if err := sqs.NewChannelMaker(ch.c, sqs.ChannelOptions{Queue: ch.dlq, Fifo: ch.f.fifo}).EnsureChannels(context.Background()); err != nil {
		t.Fatalf("create the dead-letter queue %s: %v", ch.dlq, err)
	}
	ch.healed.Store(true)
}
func (ch *sqsChannel) Invalid(t testing.TB) broker.Consumer { return ch.reader(t, ch.inv) }

// SourceTopic is the queue, or the SNS topic Send publishes to, as SQS
// and SNS name it (sqs.QueueName, sqs.TopicName: "." becomes "_", FIFO
// names end in ".fifo").
func (ch *sqsChannel) SourceTopic() string {
	if ch.f.sns {
		return sqs.TopicName(ch.routingKey, ch.f.fifo)
	}
	return sqs.QueueName(ch.routingKey, ch.f.fifo)
}

// RedeliveryBound is the queue's visibility timeout (the SQS client extends
// no lease on its own; the pump's extensions stop at the settle).
func (ch *sqsChannel) RedeliveryBound() time.Duration      { return ch.lease }
func (ch *sqsChannel) Native(t testing.TB) broker.Consumer { return ch.reader(t, ch.native) }

// TestSQSConformance runs every behaviour over the four AWS configurations
// in both variants (R-12, NFR-8) and records the
// cells in the ledger.
func TestSQSConformance(t *testing.T) {
	t.Parallel()
	ledger.Note("SQS", "Which engine proves what: every cell here ran on fauxqs (node_modules, pinned in package-lock.json), "+
		"which redelivers a message whose visibility timeout lapsed or that was released, as AWS does (docs/emulators.md#fauxqs-sqs-and-sns), so its "+
		"loss and invocation-count rows prove brighter; they wait through the same guard as Pub/Sub's (AwaitFinal). Two of its gaps "+
		"(docs/emulators.md#fauxqs-sqs-and-sns) are covered where a row depends on them: a FIFO receive returns at most one message per group, so R-4/ordered-deferral "+
		"(a group under deferral) runs on SqsFifo and SnsFifo through sqstest.FIFOBatcher, HTTP middleware that returns several of a group "+
		"in order as AWS does; a delete with a superseded receipt answers success and deletes nothing (AWS documents the same), so "+
		"R-4/lapse-redelivery and R-4/stale-settle require an acknowledgement with the newest receipt, never a settle's success alone.")
	for _, f := range sqsFixtures() {
		for _, v := range Variants {
			t.Run(f.config+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				RunAll(t, ledger, f, v)
			})
		}
		t.Run(f.config+"/consumer", func(t *testing.T) {
			t.Parallel()
			RunConsumerRows(t, ledger, f)
		})
	}
}

// lockstepRun is what one budget-exhaustion run shows a user: the routed
// copy's bag keys, its route and the log texts.
type lockstepRun struct {
	keys   []string
	route  broker.Route
	texts  []string
	reason string
}

func sqsLockstepRun(t *testing.T, f *sqsFixture, v pump.Variant) lockstepRun {
	t.Helper()
	sc := run(t, f, v, Setup{RequeueCount: 3, DeadLetter: true}, always(pump.Defer))
	polltest.Until(t, waitLong, "a rejection", func() bool { return len(sc.rec.Rejects(sc.id)) > 0 })
	sc.running.Quit(t)
	m := firstOn(t, sc.ch.DeadLetter(t), sc.id, waitShort)
	var out lockstepRun
	for k := range m.Header.Bag {
		if k != "messageDeduplicationId" { // FIFO only; not a rejection key
			out.keys = append(out.keys, k)
		}
	}
	slices.Sort(out.keys)
	out.route = sc.rec.Rejects(sc.id)[0].Result.Route
	out.reason, _ = m.Header.Bag.String(message.KeyRejectionReason)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(sc.logs.String()), "\n") {
		var rec struct {
			Level, Msg string
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Level != "DEBUG" && !seen[rec.Level+" "+rec.Msg] {
			seen[rec.Level+" "+rec.Msg] = true
			out.texts = append(out.texts, rec.Level+" "+rec.Msg)
		}
	}
	slices.Sort(out.texts)
	return out
}

// TestSQSDirectAndSNSInLockstep_AC13 runs the same budget-exhaustion
// scenario on SQS direct and SNS->SQS (standard and FIFO) and requires
// identical routes, metadata keys and log texts (R-12's lockstep:
// SQS read directly and SNS->SQS behave identically).
func TestSQSDirectAndSNSInLockstep_AC13(t *testing.T) {
	t.Parallel()
	fs := sqsFixtures()
	for _, v := range Variants {
		for _, pair := range [][2]*sqsFixture{{fs[0], fs[2]}, {fs[1], fs[3]}} {
			t.Run(pair[0].config+"-vs-"+pair[1].config+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				a, b := sqsLockstepRun(t, pair[0], v), sqsLockstepRun(t, pair[1], v)
				if !slices.Equal(a.keys, b.keys) {
					t.Errorf("bag keys differ:\n%s %v\n%s %v", pair[0].config, a.keys, pair[1].config, b.keys)
				}
				if a.route != b.route || a.reason != b.reason || a.route != broker.RouteDeadLetter {
					t.Errorf("routes %s/%s reasons %s/%s", a.route, b.route, a.reason, b.reason)
				}
				if !slices.Equal(a.texts, b.texts) {
					t.Errorf("log texts differ:\n%s %v\n%s %v", pair[0].config, a.texts, pair[1].config, b.texts)
				}
			})
		}
	}
}

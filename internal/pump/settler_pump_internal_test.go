package pump

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// timedAcks is a memory consumer whose AcknowledgeBatch takes took (a
// broker round trip, on the synctest bubble's clock) and records when each
// acknowledgement reached it and when its call returned.
type timedAcks struct {
	*memory.Consumer
	took time.Duration
	// onReceive, when not nil, is called as each Receive begins.
	onReceive func()

	mu      sync.Mutex
	sentAt  map[string]time.Time // message id -> when its AcknowledgeBatch began
	calls   int                  // AcknowledgeBatch calls
	settled int                  // acknowledgements whose call has returned
	singles atomic.Int64         // Acknowledge calls (one message each)
}

func newTimedAcks(b *memory.Broker, q string, lease, took time.Duration) *timedAcks {
	return &timedAcks{Consumer: b.NewConsumer(memory.ConsumerOptions{Queue: q, BufferSize: 10, VisibilityTimeout: lease}),
		took: took, sentAt: map[string]time.Time{}}
}

func (c *timedAcks) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	now := time.Now()
	c.mu.Lock()
	c.calls++
	for _, m := range ms {
		c.sentAt[m.Header.MessageID] = now
	}
	c.mu.Unlock()
	time.Sleep(c.took) // the acknowledgement's round trip under test, injected on purpose
	errs := c.Consumer.AcknowledgeBatch(ctx, ms)
	c.mu.Lock()
	c.settled += len(ms)
	c.mu.Unlock()
	return errs
}

func (c *timedAcks) Receive(ctx context.Context, d time.Duration) ([]*message.Message, error) {
	if c.onReceive != nil {
		c.onReceive()
	}
	return c.Consumer.Receive(ctx, d)
}

func (c *timedAcks) Acknowledge(ctx context.Context, m *message.Message) error {
	c.singles.Add(1)
	return c.Consumer.Acknowledge(ctx, m)
}

// ReceivesConcurrently lets the Proactor's receives overlap: a receiver
// waiting on the mutex that otherwise serialises them is not durably
// blocked, so the synctest bubble's clock would never move. These tests
// check when acknowledgements are sent, not a key's order.
func (c *timedAcks) ReceivesConcurrently() bool { return true }

// counts returns the calls and the acknowledgements settled so far.
func (c *timedAcks) counts() (calls, settled int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.settled
}

// publishN puts n MT_COMMAND messages on q, every keyEvery-th (when not 0)
// with one of three partition keys.
func publishN(t *testing.T, b *memory.Broker, q string, n, keyEvery int) {
	t.Helper()
	for i := range n {
		m := message.New(fmt.Sprint("m", i), q, message.MTCommand, []byte(`{}`))
		if keyEvery > 0 && i%keyEvery == 0 {
			m.Header.PartitionKey = fmt.Sprint("k", i%3)
		}
		if err := b.Publish(context.Background(), q, m); err != nil {
			t.Fatalf("publish %s: %v", m.Header.MessageID, err)
		}
	}
}

// bubblePerformers is how many performers a variant runs with in a
// synctest bubble: n for the Reactor, 1 for the Proactor, whose receivers
// hold a mutex while a lane is full; a receiver waiting on a mutex is not
// durably blocked, so the bubble's clock would stop while the workers that
// would empty the lane sleep in their handlers.
func bubblePerformers(v Variant, n int) int {
	if v == Proactor {
		return 1
	}
	return n
}

// settleOptions are pump options for the settle batching tests.
func settleOptions(v Variant, performers int) Options {
	return Options{Subscription: "settle", Variant: v, NoOfPerformers: performers, BufferSize: 10,
		TimeOut: 5 * time.Millisecond, RequeueCount: -1, EmptyChannelDelay: time.Millisecond,
		ChannelFailureDelay: time.Millisecond, DrainTimeout: 5 * time.Second}
}

// In both variants, every acknowledgement reaches the broker within its
// bound of its handler's return: a keyless one within the window bounded
// by a twentieth of the lease (15 ms on a lease of 300 ms), a keyed one
// within ackBatchWait. The Reactor's performers go on to their next
// messages meanwhile, and the acknowledgements still go in batches, not
// one call each. Handlers of 0-5 ms on four Reactor performers (one
// Proactor worker: bubblePerformers), in a synctest bubble whose clock
// moves only when every goroutine waits.
func TestBatchedAcknowledgementsLeaveWithinTheirBound(t *testing.T) {
	const lease, n = 300 * time.Millisecond, 240
	bound := ackBound(lease)
	if bound >= ackBatchWindow {
		t.Fatalf("ackBound(%s) = %s: the test needs a lease that shortens the window", lease, bound)
	}
	for _, v := range []Variant{Reactor, Proactor} {
		t.Run(string(v), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := memory.NewBroker(false)
				c := newTimedAcks(b, "q", lease, 0)
				publishN(t, b, "q", n, 5)
				var mu sync.Mutex
				returned := map[string]time.Time{}
				keyed := map[string]bool{}
				h := func(_ context.Context, m *message.Message) Result {
					f := fnv.New32a()
					_, _ = f.Write([]byte(m.Header.MessageID))
					time.Sleep(time.Duration(f.Sum32()%6) * time.Millisecond)
					mu.Lock()
					returned[m.Header.MessageID] = time.Now()
					keyed[m.Header.MessageID] = m.Header.PartitionKey != ""
					mu.Unlock()
					return Result{Outcome: Ack}
				}
				p, err := New(c, h, settleOptions(v, bubblePerformers(v, 4)))
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- p.Run(ctx) }()
				for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
					calls, settled := c.counts()
					if settled >= n {
						break
					}
					if time.Now().After(deadline) {
						cancel()
						<-done
						t.Fatalf("%d of %d acknowledgements settled after a minute (%d calls, %d handled, %d sent one per call)", settled, n, calls, len(returned), c.singles.Load())
					}
				}
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("Run: %v", err)
				}
				calls, settled := c.counts()
				if settled != n || len(c.sentAt) != n {
					t.Fatalf("%d acknowledgements settled of %d messages (%d distinct)", settled, n, len(c.sentAt))
				}
				if s := c.singles.Load(); s != 0 {
					t.Errorf("%d acknowledgements sent one per call, want every one in a batch", s)
				}
				if calls*3 > n {
					t.Errorf("%d AcknowledgeBatch calls for %d messages: batches of %.1f on average, want more than 3",
						calls, n, float64(n)/float64(calls))
				}
				late := 0
				for id, sent := range c.sentAt {
					want := bound
					if keyed[id] {
						want = ackBatchWait
					}
					if waited := sent.Sub(returned[id]); waited > want || waited < 0 {
						late++
						if late <= 5 {
							t.Errorf("acknowledgement of %s (keyed %v) reached the broker %s after its handler returned, want within %s",
								id, keyed[id], waited, want)
						}
					}
				}
				if late > 5 {
					t.Errorf("... %d acknowledgements past their bound in all", late)
				}
			})
		})
	}
}

// In both variants, a graceful stop never leaves a batched acknowledgement
// unsent: Run returns only after every acknowledgement handed to the
// batcher has been sent and its call has returned, that of the message
// whose handler ran as the stop began included, although each batch call
// takes 30 ms (on the synctest bubble's clock).
func TestGracefulStopSendsEveryBatchedAcknowledgement(t *testing.T) {
	const n = 7
	for _, v := range []Variant{Reactor, Proactor} {
		t.Run(string(v), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := memory.NewBroker(false)
				c := newTimedAcks(b, "q", 30*time.Second, 30*time.Millisecond)
				publishN(t, b, "q", n, 0)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var handled atomic.Int64
				h := func(context.Context, *message.Message) Result {
					time.Sleep(2 * time.Millisecond) // the handler's work
					if handled.Add(1) == n {
						cancel() // the stop begins while this handler runs
					}
					return Result{Outcome: Ack}
				}
				p, err := New(c, h, settleOptions(v, bubblePerformers(v, 2)))
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Run(ctx); err != nil {
					t.Fatalf("Run: %v", err)
				}
				calls, settled := c.counts()
				if handled.Load() != n || settled != n {
					t.Errorf("Run returned with %d of %d handled messages' acknowledgements settled (%d batch calls)", settled, handled.Load(), calls)
				}
				if s := c.singles.Load(); s != 0 {
					t.Errorf("%d acknowledgements sent one per call, want every one in a batch", s)
				}
			})
		})
	}
}

// A Reactor performer receives again only once the acknowledgements of
// its batch whose lease had lapsed have been sent and answered: the
// broker may be handing such a message out again, and a receive before
// the acknowledgement could bring it back to be handled twice. Handlers
// (25 ms) slower than the lease (20 ms) with extension off, so every
// acknowledgement is late; each batch call takes 3 ms; one performer,
// batches of ten, on a synctest bubble's clock.
func TestReactorReceivesAgainOnlyOnceItsLateAcknowledgementsAreSent(t *testing.T) {
	const n, took = 25, 3 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		b := memory.NewBroker(false)
		c := newTimedAcks(b, "q", 20*time.Millisecond, took)
		publishN(t, b, "q", n, 0)
		var mu sync.Mutex
		acked, receives, early := 0, 0, 0
		c.onReceive = func() {
			_, settled := c.counts()
			mu.Lock()
			defer mu.Unlock()
			receives++
			if settled < acked {
				early++
			}
		}
		h := func(context.Context, *message.Message) Result {
			time.Sleep(25 * time.Millisecond) // the handler's work: every lease lapses in it
			mu.Lock()
			acked++
			mu.Unlock()
			return Result{Outcome: Ack}
		}
		opts := settleOptions(Reactor, 1)
		opts.MaxLeaseExtension = -1 // off: every lease lapses in its handler
		p, err := New(c, h, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			if _, settled := c.counts(); settled >= n {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("fewer than %d acknowledgements sent within a minute", n)
				break
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if early > 0 {
			t.Errorf("%d of %d receives began with late acknowledgements of the performer's batch not yet sent", early, receives)
		}
		if s := c.singles.Load(); s != 0 {
			t.Errorf("%d acknowledgements sent one per call, want every one through the batcher", s)
		}
	})
}

package tui

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/pump"
)

// benchMessages is how many messages one pump run handles.
const benchMessages = 4000

// benchWork is the CPU time the handler spends per message: it keeps the
// pump near 10,000-20,000 messages (twice as many events) a second on one
// performer, the load the issue names.
const benchWork = 50 * time.Microsecond

func burn(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// runPump pumps benchMessages messages through a Reactor over the memory
// transport with the given observers and returns how long it took.
func runPump(tb testing.TB, observers ...pump.Observer) time.Duration {
	tb.Helper()
	br := memory.NewBroker(false)
	body := []byte(`{"n":1}`)
	for i := range benchMessages {
		if err := br.Publish(context.Background(), "bench", message.New("m"+strconv.Itoa(i), "bench", message.MTCommand, body)); err != nil {
			tb.Fatal(err)
		}
	}
	c := br.NewConsumer(memory.ConsumerOptions{Queue: "bench", BufferSize: 10, StopWhenEmpty: true})
	p, err := pump.New(c, func(context.Context, *message.Message) pump.Result {
		burn(benchWork)
		return pump.Result{Outcome: pump.Ack}
	}, pump.Options{Subscription: "bench", Variant: pump.Reactor, RequeueCount: 3}, observers...)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if err := p.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return time.Since(start)
}

// dashboard is the whole watch path in one process: the pump's Stream
// served on /events, read back by Watch into a Batcher, batches applied to
// the Model and rendered after every update (as bubbletea does).
type dashboard struct {
	stream  *observe.Stream
	views   atomic.Int64
	records atomic.Int64
	cancel  context.CancelFunc
	stop    func(context.Context) error
}

func startDashboard(tb testing.TB) *dashboard {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &dashboard{stream: observe.NewStream(0, 0), cancel: cancel}
	srv := &observe.Server{Stream: d.stream}
	addr, stop, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	d.stop = stop
	msgs := make(chan tea.Msg, 16)
	send := func(m tea.Msg) {
		select {
		case msgs <- m:
		case <-ctx.Done():
		}
	}
	b := NewBatcher(DefaultBatchInterval, 0)
	go b.Run(ctx, send)
	go Watch(ctx, http.DefaultClient, "http://"+addr, b, send)
	go func() {
		var m tea.Model = New(Options{NoColor: true, Tick: -1})
		for {
			select {
			case <-ctx.Done():
				return
			case msg := <-msgs:
				if em, ok := msg.(EventsMsg); ok {
					d.records.Add(int64(len(em.Records)))
				}
				m, _ = m.Update(msg)
				_ = m.View()
				d.views.Add(1)
			}
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for d.stream.Readers() == 0 {
		if time.Now().After(deadline) {
			tb.Fatal("dashboard did not connect")
		}
		time.Sleep(time.Millisecond)
	}
	return d
}

func (d *dashboard) close() {
	d.cancel()
	ctx, c := context.WithTimeout(context.Background(), time.Second)
	defer c()
	_ = d.stop(ctx)
}

// BenchmarkDashboard measures, in one run, the pump's throughput without
// and with a connected dashboard (issue 8, Performance): the events go
// through /events into the model at well over 10,000 a second; the ratio
// target is at least 0.95 (reported, not asserted) and the dashboard must
// redraw at most 10 times a second (asserted: it is the throttle's job). Runs alternate so drift hits both sides alike.
//
//	go test -run '^$' -bench Dashboard -benchtime 3x ./internal/tui
func BenchmarkDashboard(b *testing.B) {
	d := startDashboard(b)
	defer d.close()
	runPump(b) // warm up
	var without, with time.Duration
	var ratios []float64
	views0 := d.views.Load()
	start := time.Now()
	for b.Loop() {
		// Short alternating pairs: noise from the rest of the machine lands
		// on both sides of a pair, and the median pair discards bursts.
		for range benchPairs {
			a := runPump(b)
			w := runPump(b, d.stream)
			without += a
			with += w
			ratios = append(ratios, a.Seconds()/w.Seconds())
		}
	}
	elapsed := time.Since(start)
	views := d.views.Load() - views0
	slices.Sort(ratios)
	ratio := ratios[len(ratios)/2]
	runs := float64(len(ratios))
	eventsPerSec := 2 * benchMessages * runs / with.Seconds()
	redrawsPerSec := float64(views) / elapsed.Seconds()
	b.ReportMetric(ratio, "throughput-ratio")
	b.ReportMetric(benchMessages*runs/without.Seconds(), "msgs/s-alone")
	b.ReportMetric(benchMessages*runs/with.Seconds(), "msgs/s-watched")
	b.ReportMetric(eventsPerSec, "events/s")
	b.ReportMetric(redrawsPerSec, "redraws/s")
	b.ReportMetric(float64(d.stream.Dropped()), "dropped")
	b.Logf("median pair ratio %.3f (min %.3f, max %.3f); %.0f events/s watched; %.2f redraws/s", ratio, ratios[0], ratios[len(ratios)-1], eventsPerSec, redrawsPerSec)
	// Targets are measured and reported, not asserted: a loaded machine
	// must not fail `make bench` (docs/performance.md records the figures).
	if eventsPerSec < 10000 {
		b.Logf("BELOW TARGET: only %.0f events/s reached the stream; the target needs at least 10,000", eventsPerSec)
	}
	if ratio < 0.95 {
		b.Logf("BELOW TARGET: throughput with a dashboard is %.3f of without; the target is >= 0.95", ratio)
	}
	if redrawsPerSec > 10.5 {
		b.Errorf("dashboard redrew %.1f times a second; want <= 10", redrawsPerSec)
	}
}

// benchPairs is how many without/with pairs one benchmark iteration runs.
const benchPairs = 15

// TestDashboard_10kEventsPerSecond_RedrawsAtMost10PerSecond pushes 10,000
// events a second for a second through /events into the model: every
// record arrives (no drops at this rate) and the model is updated and
// redrawn at most 10 times a second plus the connection's status update.
func TestDashboard_10kEventsPerSecond_RedrawsAtMost10PerSecond(t *testing.T) {
	d := startDashboard(t)
	defer d.close()
	m := message.New("m", "bench", message.MTCommand, []byte("{}"))
	e := pump.Event{Kind: pump.EventReceived, Subscription: "bench", Message: m, Budget: 3}
	const perTick, ticks = 100, 100 // 100 events every 10ms = 10,000/s for 1s
	views0 := d.views.Load()
	start := time.Now()
	tk := time.NewTicker(10 * time.Millisecond)
	for range ticks {
		<-tk.C
		for range perTick {
			e.Time = time.Now()
			d.stream.Observe(e)
		}
	}
	tk.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for d.records.Load() < perTick*ticks {
		if time.Now().After(deadline) {
			t.Fatalf("model received %d of %d records", d.records.Load(), perTick*ticks)
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	views := d.views.Load() - views0
	if limit := int64(elapsed.Seconds()*10) + 2; views > limit {
		t.Fatalf("%d redraws in %v; want at most %d (10/s)", views, elapsed, limit)
	}
	if got := d.stream.Dropped(); got != 0 {
		t.Fatalf("%d records dropped at 10,000 events/s", got)
	}
}

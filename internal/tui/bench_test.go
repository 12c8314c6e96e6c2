package tui

import (
	"context"
	"net/http"
	"runtime"
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

// benchLoad is one load BenchmarkDashboard measures: how long the handler
// spins per message (wall time) and how many messages one pump run handles
// (about 0.2-0.4 s of pumping). Every message makes two events (received,
// acknowledged), so the event rate is twice the message rate.
type benchLoad struct {
	name     string
	work     time.Duration
	messages int
}

// benchLoads: the target load (10,000 events/s, docs/performance.md: 180 µs per message
// makes about 5,300 messages and 10,600 events a second) and a heavier one,
// three and a half times that, to show how the cost grows with the rate.
var benchLoads = []benchLoad{
	{name: "events=10k", work: 180 * time.Microsecond, messages: 2000},
	{name: "events=35k", work: 50 * time.Microsecond, messages: 4000},
}

func burn(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// runPump pumps load.messages messages through a Reactor over the memory
// transport with the given observers and returns how long it took.
func runPump(tb testing.TB, load benchLoad, observers ...pump.Observer) time.Duration {
	tb.Helper()
	br := memory.NewBroker(false)
	body := []byte(`{"n":1}`)
	for i := range load.messages {
		if err := br.Publish(context.Background(), "bench", message.New("m"+strconv.Itoa(i), "bench", message.MTCommand, body)); err != nil {
			tb.Fatal(err)
		}
	}
	c := br.NewConsumer(memory.ConsumerOptions{Queue: "bench", BufferSize: 10, StopWhenEmpty: true})
	p, err := pump.New(c, func(context.Context, *message.Message) pump.Result {
		burn(load.work)
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
	records atomic.Int64 // event records the model received
	dropped atomic.Int64 // records counted as dropped on the way (the stream's or the batcher's)
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
					d.dropped.Add(int64(em.Dropped))
					for _, r := range em.Records {
						if r.Kind == observe.KindDropped {
							d.dropped.Add(int64(r.Dropped))
						} else {
							d.records.Add(1)
						}
					}
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
// and with a connected dashboard (docs/performance.md), at the target's
// 10,000 events a second and at about 35,000: the events go through /events
// into the model, all in the pump's own process (as `consume --tui` runs it;
// `brighter watch` in its own process leaves only the /events encoding in
// the pump's process). The ratio target
// is at least 0.95 at 10,000 events/s (reported, not asserted) and the
// dashboard must redraw at most 10 times a second (asserted: it is the
// throttle's job). Runs alternate so drift hits both sides alike.
//
//	go test -run '^$' -bench Dashboard -benchtime 3x ./internal/tui
func BenchmarkDashboard(b *testing.B) {
	for _, load := range benchLoads {
		b.Run(load.name, func(b *testing.B) { benchDashboard(b, load) })
	}
}

func benchDashboard(b *testing.B, load benchLoad) {
	d := startDashboard(b)
	defer d.close()
	runPump(b, load) // warm up
	var without, with time.Duration
	var ratios []float64
	var gcAlone, gcWatched uint32
	var ms runtime.MemStats
	numGC := func() uint32 { runtime.ReadMemStats(&ms); return ms.NumGC }
	views0 := d.views.Load()
	start := time.Now()
	for b.Loop() {
		// Short alternating pairs: noise from the rest of the machine lands
		// on both sides of a pair, and the median pair discards bursts.
		for range benchPairs {
			g0 := numGC()
			a := runPump(b, load)
			g1 := numGC()
			w := runPump(b, load, d.stream)
			g2 := numGC()
			without += a
			with += w
			gcAlone += g1 - g0
			gcWatched += g2 - g1
			ratios = append(ratios, a.Seconds()/w.Seconds())
		}
	}
	elapsed := time.Since(start)
	views := d.views.Load() - views0
	slices.Sort(ratios)
	ratio := ratios[len(ratios)/2]
	runs := float64(len(ratios))
	msgs := float64(load.messages) * runs
	eventsPerSec := 2 * msgs / with.Seconds()
	redrawsPerSec := float64(views) / elapsed.Seconds()
	b.ReportMetric(ratio, "throughput-ratio")
	b.ReportMetric(msgs/without.Seconds(), "msgs/s-alone")
	b.ReportMetric(msgs/with.Seconds(), "msgs/s-watched")
	b.ReportMetric(eventsPerSec, "events/s")
	b.ReportMetric(redrawsPerSec, "redraws/s")
	b.ReportMetric(float64(d.stream.Dropped()), "dropped")
	b.ReportMetric(float64(gcAlone)/runs, "GCs/run-alone")
	b.ReportMetric(float64(gcWatched)/runs, "GCs/run-watched")
	b.Logf("median pair ratio %.3f (min %.3f, max %.3f); %.0f events/s watched; %.2f redraws/s; GCs per run %.1f alone, %.1f watched",
		ratio, ratios[0], ratios[len(ratios)-1], eventsPerSec, redrawsPerSec, float64(gcAlone)/runs, float64(gcWatched)/runs)
	// Targets are measured and reported, not asserted: a loaded machine
	// must not fail `make bench` (docs/performance.md records the figures).
	if eventsPerSec < 10000 {
		b.Logf("BELOW LOAD: only %.0f events/s reached the stream; the target is measured at 10,000 or more", eventsPerSec)
	}
	if ratio < 0.95 {
		b.Logf("BELOW TARGET: throughput with a dashboard is %.3f of without; the target is >= 0.95 (at 10,000 events/s)", ratio)
	}
	if redrawsPerSec > 10.5 {
		b.Errorf("dashboard redrew %.1f times a second; want <= 10", redrawsPerSec)
	}
}

// benchPairs is how many without/with pairs one benchmark iteration runs.
const benchPairs = 12

// TestDashboard_10kEventsPerSecond_RedrawsAtMost10PerSecond pushes 10,000
// events a second for a second through /events into the model: every
// record arrives or is counted as dropped (none is lost silently), and the
// model is updated and redrawn at most 10 times a second plus the
// connection's status update. Whether it keeps up without dropping is
// speed, measured by BenchmarkDashboard ("dropped", docs/performance.md):
// a quiet machine drops none; under the race detector beside a CPU hog
// (make test-stress) the batcher dropped 400 of 10,000 by design, its
// queue being bounded.
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
	// The model drains what was observed at its own pace (slower under
	// the race detector beside a CPU hog: 8,583 of 10,000 after 10 s in a
	// make test-stress run): wait while it makes progress, and fail only
	// when it stalls, with what it had received.
	accounted := func() int64 { return d.records.Load() + d.dropped.Load() }
	last, lastAt := accounted(), time.Now()
	for accounted() < perTick*ticks {
		if n := accounted(); n != last {
			last, lastAt = n, time.Now()
		}
		if time.Since(lastAt) > 5*time.Second {
			t.Fatalf("model received %d of %d records (and %d counted as dropped) and no more in 5s: the rest were lost silently",
				d.records.Load(), perTick*ticks, d.dropped.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := d.dropped.Load(); n > 0 {
		t.Logf("%d of %d records dropped on the way and counted (a loaded machine; BenchmarkDashboard measures it)", n, perTick*ticks)
	}
	elapsed := time.Since(start)
	views := d.views.Load() - views0
	if limit := int64(elapsed.Seconds()*10) + 2; views > limit {
		t.Fatalf("%d redraws in %v; want at most %d (10/s)", views, elapsed, limit)
	}
	if got, counted := d.stream.Dropped(), d.dropped.Load(); int64(got) > counted {
		t.Fatalf("the stream dropped %d records, the model was told of %d", got, counted)
	}
}

package pump_test

import (
	"context"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// noLeases is the memory consumer with its lease hidden: Lease reports 0, so
// the pump tracks nothing (newLeases returns nil), and every other interface
// the hot path uses (BatchAcknowledger) is still promoted
// from the embedded consumer. (An earlier version embedded the consumer
// without overriding Lease, so its promoted Lease and ExtendLeases left lease
// management on in the "off" case too.)
type noLeases struct{ *memory.Consumer }

// Lease reports no lease (broker.LeaseExtender): the pump manages none.
func (noLeases) Lease() time.Duration { return 0 }

// leasePump is the no-op Ack pump of variant v (one performer, bufferSize
// 10) over a fresh memory broker's queue "bench", whose consumer lends its
// 30 s lease when on and hides it (noLeases) when not.
func leasePump(b *testing.B, v pump.Variant, on bool) (*memory.Broker, *pump.Pump) {
	b.Helper()
	br := memory.NewBroker(false)
	mc := br.NewConsumer(memory.ConsumerOptions{Queue: "bench", BufferSize: benchBuffer, StopWhenEmpty: true, VisibilityTimeout: 30 * time.Second})
	var c broker.Consumer = noLeases{mc}
	if on {
		c = mc
	}
	if le, ok := c.(broker.LeaseExtender); ok && (le.Lease() > 0) != on {
		b.Fatalf("leases on=%v: the consumer lends a lease of %v", on, le.Lease())
	}
	p, err := pump.New(c, func(context.Context, *message.Message) pump.Result {
		return pump.Result{Outcome: pump.Ack}
	}, pump.Options{
		Subscription: "bench", Variant: v, NoOfPerformers: 1, BufferSize: benchBuffer,
		TimeOut: 10 * time.Millisecond, RequeueCount: -1,
	})
	if err != nil {
		b.Fatal(err)
	}
	return br, p
}

// BenchmarkPumpLeases is BenchmarkPump over a memory consumer whose lease the
// pump cannot see (off: it tracks nothing) and over the same consumer with its
// 30 s lease under the default maxLeaseExtension (every message tracked from
// receive to settle, the schedule ticking): with handlers far shorter than
// half the lease, what lease management costs per message (the target: at most
// 3% of throughput and no broker call; docs/performance.md).
func BenchmarkPumpLeases(b *testing.B) {
	for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
		for _, lm := range []struct {
			name string
			on   bool
		}{{"off", false}, {"on", true}} {
			b.Run(string(v)+"/leases-"+lm.name, func(b *testing.B) {
				br, p := leasePump(b, v, lm.on)
				benchRun(b, br, p)
			})
		}
	}
}

// BenchmarkPumpLeasesPaired measures what BenchmarkPumpLeases does, but in
// one process and interleaved: each variant has two pumps, one over a
// consumer that lends its 30 s lease (on) and one over the same kind of
// consumer with its lease hidden (off, noLeases), and b.N messages go
// through each in alternating chunks of benchChunk, the side that runs first
// swapping every chunk. Separate processes (BenchmarkPumpLeases run twice)
// differ by more than the few per cent sought: heap layout, GC pacing and
// the machine's load move between them, while alternate chunks of one
// process share them. One op is one message on each side. It reports, for
// each side, ns/msg (wall time in Run per message) and cpu-ns/msg, and
// on/off: the on side's throughput over the off side's (1 = lease
// management costs nothing; the target is at least 0.97), and
// on/off-cpu, the same ratio from CPU time. Compare runs with benchstat
// (docs/performance.md).
func BenchmarkPumpLeasesPaired(b *testing.B) {
	for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
		b.Run(string(v), func(b *testing.B) {
			type side struct {
				br          *memory.Broker
				p           *pump.Pump
				elapsed, cp time.Duration
			}
			mk := func(on bool) *side {
				br, p := leasePump(b, v, on)
				return &side{br: br, p: p}
			}
			off, on := mk(false), mk(true)
			b.ReportAllocs()
			b.ResetTimer()
			for done, k := 0, 0; done < b.N; k++ {
				n := min(benchChunk, b.N-done)
				pair := [2]*side{off, on}
				if k%2 == 1 {
					pair = [2]*side{on, off}
				}
				for _, s := range pair {
					b.StopTimer()
					fill(b, s.br, "bench", done, n)
					b.StartTimer()
					start, cpu0 := time.Now(), processCPU(b)
					if err := s.p.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
					s.elapsed += time.Since(start)
					s.cp += processCPU(b) - cpu0
				}
				done += n
			}
			b.StopTimer()
			for _, s := range []*side{off, on} {
				if d := s.br.Depth("bench"); d != 0 {
					b.Fatalf("%d messages left on the queue", d)
				}
			}
			perMsg := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
			b.ReportMetric(perMsg(off.elapsed), "off-ns/msg")
			b.ReportMetric(perMsg(on.elapsed), "on-ns/msg")
			b.ReportMetric(perMsg(off.cp), "off-cpu-ns/msg")
			b.ReportMetric(perMsg(on.cp), "on-cpu-ns/msg")
			b.ReportMetric(off.elapsed.Seconds()/on.elapsed.Seconds(), "on/off")
			b.ReportMetric(off.cp.Seconds()/on.cp.Seconds(), "on/off-cpu")
		})
	}
}

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

// BenchmarkPumpLeases is BenchmarkPump over a memory consumer whose lease
// the pump cannot see (off: it tracks nothing) and over the same consumer
// with its 30 s lease under the default maxLeaseExtension (every message tracked from receive to
// settle, the schedule ticking): with handlers far shorter than half the
// lease, what lease management costs per message (issue 12: at most 3% of
// throughput and no broker call; docs/performance.md).
func BenchmarkPumpLeases(b *testing.B) {
	for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
		for _, lm := range []struct {
			name string
			on   bool
		}{{"off", false}, {"on", true}} {
			b.Run(string(v)+"/leases-"+lm.name, func(b *testing.B) {
				br := memory.NewBroker(false)
				mc := br.NewConsumer(memory.ConsumerOptions{Queue: "bench", BufferSize: benchBuffer, StopWhenEmpty: true, VisibilityTimeout: 30 * time.Second})
				var c broker.Consumer = noLeases{mc}
				if lm.on {
					c = mc
				}
				if le, ok := c.(broker.LeaseExtender); ok && (le.Lease() > 0) != lm.on {
					b.Fatalf("leases-%s: the consumer lends a lease of %v", lm.name, le.Lease())
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
				benchRun(b, br, p)
			})
		}
	}
}

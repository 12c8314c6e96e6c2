package pump

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// BenchmarkLeaseTracking is what lease management adds to one message's
// path through the pump when no extension is due (handlers shorter than
// half the lease; docs/performance.md): per batch of ten, hold with its clock reading;
// per message, the lapse check before dispatch and the end before the
// settle. One op is one message. Compare its ns/op with BenchmarkPumpLeases'
// leases-off ns/op in the same run for the share of a message's cost
// (docs/performance.md); the end-to-end pair is too noisy on a 2-core
// machine to resolve a few per cent. The benchmark keeps a live heap of
// the pump benchmark's size (a chunk of 10,000 messages): with an empty
// heap a collection starts every few megabytes and its fixed cost, not
// tracking, would be measured.
func BenchmarkLeaseTracking(b *testing.B) {
	c := memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "bench", BufferSize: 10, VisibilityTimeout: 30 * time.Second})
	l := newLeases(c, DefaultMaxLeaseExtension, func(Event) {})
	if l == nil {
		b.Fatal("the memory consumer lends no lease")
	}
	ms := make([]*message.Message, 10)
	for i := range ms {
		ms[i] = &message.Message{Receipt: i + 1}
	}
	backlog := make([]*message.Message, 10000)
	for i := range backlog {
		backlog[i] = message.New("m"+strconv.Itoa(i), "bench", message.MTCommand, []byte(`{"n":1}`))
	}
	defer runtime.KeepAlive(backlog)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += len(ms) {
		lb := l.hold(ms)
		now := time.Now() // the pump reads this clock anyway, for the handler's start
		for i := range ms {
			ref := lb.at(i)
			if l.lapsed(ref, now) {
				b.Fatal("lapsed")
			}
			l.end(ref)
		}
	}
}

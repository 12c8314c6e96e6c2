package memory_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// BenchmarkMemoryReceive is the transport's own cost per message: Receive in
// batches of 10 and Acknowledge each message, no pump. One op is one
// message. BenchmarkPump (internal/pump) minus this is the pump's own cost.
func BenchmarkMemoryReceive(b *testing.B) {
	br := memory.NewBroker(false)
	c := br.NewConsumer(memory.ConsumerOptions{Queue: "bench", BufferSize: 10})
	body := []byte(`{"n":1}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed time.Duration
	// Chunks of 10,000 keep the backlog the size BenchmarkPump uses.
	for done := 0; done < b.N; {
		chunk := min(10000, b.N-done)
		b.StopTimer()
		for i := done; i < done+chunk; i++ {
			m := message.New("m"+strconv.Itoa(i), "bench", message.MTCommand, body)
			if err := br.Publish(ctx, "bench", m); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start := time.Now()
		for n := 0; n < chunk; {
			ms, err := c.Receive(ctx, 10*time.Millisecond)
			if err != nil {
				b.Fatal(err)
			}
			if len(ms) == 0 {
				b.Fatalf("queue empty after %d of %d", done+n, b.N)
			}
			for _, m := range ms {
				if err := c.Acknowledge(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
			n += len(ms)
		}
		elapsed += time.Since(start)
		done += chunk
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

package observe

import (
	"testing"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// BenchmarkStreamObserve is the cost the pump pays per event for the live
// stream: with no reader, and with one reader draining on its ticker.
func BenchmarkStreamObserve(b *testing.B) {
	m := message.New("m-1", "orders", message.MTCommand, []byte(`{"n":1}`))
	e := pump.Event{Kind: pump.EventReceived, Subscription: "orders", Message: m, Budget: 3}
	b.Run("no-reader", func(b *testing.B) {
		st := NewStream(0, DefaultBacklog)
		b.ReportAllocs()
		for b.Loop() {
			st.Observe(e)
		}
	})
	b.Run("one-reader", func(b *testing.B) {
		st := NewStream(1<<16, DefaultBacklog)
		rd := st.Subscribe()
		defer rd.Close()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			st.Observe(e)
			if i%1024 == 0 {
				for len(rd.C()) > 0 {
					<-rd.C()
				}
			}
		}
	})
	b.Run("metrics", func(b *testing.B) {
		mt := NewMetrics()
		b.ReportAllocs()
		for b.Loop() {
			mt.Observe(e)
		}
	})
}

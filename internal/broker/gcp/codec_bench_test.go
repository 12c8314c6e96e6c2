package gcp

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// BenchmarkDecodeBrighterDefault decodes the message BenchmarkConsumePubSub
// publishes (gcp.Encode of message.New with a 200-byte JSON body: Brighter's
// header attributes and no bag) and one whose bag holds two foreign
// attributes, reporting allocations.
func BenchmarkDecodeBrighterDefault(b *testing.B) {
	body := []byte(`{"orderId":"4f1c2a9e-7b3d-4e8a-9c61-2d5f0b7e8a13","customer":"c-000042","lines":[{"sku":"A-1","qty":2},{"sku":"B-7","qty":1}],"total":"129.90","currency":"EUR","placedAt":"2026-11-30T12:00:00Z"}`)
	plain := Encode(message.New("bench-1", "bench", message.MTEvent, body))
	plain.ID = "1234567890"
	bagged := Encode(message.New("bench-2", "bench", message.MTEvent, body))
	bagged.ID = "1234567891"
	bagged.Attributes["tenant"] = "acme"
	bagged.Attributes["Region"] = "eu-west-1"
	now := time.Now()
	for _, c := range []struct {
		name string
		w    Wire
	}{{"header-only", plain}, {"bag-2", bagged}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(c.w, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

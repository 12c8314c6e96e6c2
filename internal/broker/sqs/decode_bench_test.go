package sqs

import (
	"testing"

	"github.com/brightergo/brighter/internal/message"
)

// BenchmarkDecodeBrighterDefault is Decode of a message as a Brighter
// producer writes it by default (the consume benchmark's messages: the 8
// cloudeventheaders members, a bag holding only handled-count), the shape
// the flat-JSON fast path reads without encoding/json. One op = one
// message.
func BenchmarkDecodeBrighterDefault(b *testing.B) {
	m := message.New("4f1c2a9e-7b3d-4e8a-9c61-2d5f0b7e8a13", "bench", message.MTEvent, []byte(`{"orderId":"4f1c2a9e"}`))
	m.Header.ContentType = "application/json"
	out, _ := EncodeSQS(m, "http://127.0.0.1:1/000000000000/bench", nil)
	sm := asReceived(out, "id", 1)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Decode(sm, DecodeOptions{DefaultTopic: "q"})
	}
}

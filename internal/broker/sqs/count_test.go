package sqs

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/message"
)

// decodeBase is the receive-and-decode path WITHOUT the delivery-count rule:
// what a consumer that presents the stamped count only (Brighter's
// behaviour, the "base revision" of AC-37) does per message.
func decodeBase(sm types.Message, opts DecodeOptions) *message.Message {
	m, _ := decode(&sm, opts)
	m.Receipt = aws.ToString(sm.ReceiptHandle)
	return m
}

func benchMessages() []types.Message {
	out, _ := EncodeSQS(sample(), "http://127.0.0.1:1/000000000000/orders_created", nil)
	ms := make([]types.Message, 10)
	for i := range ms {
		ms[i] = asReceived(out, "id", i+1)
	}
	return ms
}

// TestCountAddsNoAllocation_NFR2_AC37 compares the allocations per message
// of the receive-and-decode path with and without the delivery-count rule:
// the budget is no increase at all.
func TestCountAddsNoAllocation_NFR2_AC37(t *testing.T) {
	ms := benchMessages()
	opts := DecodeOptions{DefaultTopic: "q"}
	base := testing.AllocsPerRun(1000, func() {
		for _, sm := range ms {
			_ = decodeBase(sm, opts)
		}
	})
	post := testing.AllocsPerRun(1000, func() {
		for _, sm := range ms {
			_, _ = Decode(sm, opts)
		}
	})
	if post > base {
		t.Fatalf("allocations per 10 messages: with count %.1f > base %.1f (NFR-2 forbids any increase)", post, base)
	}
	if m, _ := Decode(ms[3], opts); m.Header.HandledCount != 2+3 {
		t.Fatalf("count not applied: %d", m.Header.HandledCount)
	}
}

// BenchmarkReceiveDecode measures the receive-and-decode path per message,
// base (stamped count only) against post (stamped + ApproximateReceiveCount
// - 1). Figures are recorded in docs/performance.md (AC-37).
func BenchmarkReceiveDecode(b *testing.B) {
	ms := benchMessages()
	opts := DecodeOptions{DefaultTopic: "q"}
	b.Run("base", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = decodeBase(ms[i%len(ms)], opts)
		}
	})
	b.Run("post", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, _ = Decode(ms[i%len(ms)], opts)
		}
	})
}

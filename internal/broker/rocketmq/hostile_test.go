package rocketmq_test

import (
	"math"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
)

// A hostile count: a HandledCount at the limit and beyond is Unacceptable naming
// the property, with CE_id, correlation id and every other property kept.
func TestStampedCountAtLimitAndBeyondIsUnacceptable_R4(t *testing.T) {
	for _, c := range []string{"1000000", "9223372036854775807", "9223372036854775808", "-1", "x"} {
		w := rocketmq.Wire{Topic: "t", MessageID: "broker-id", Body: []byte("b"),
			Properties: map[string]string{rocketmq.PropID: "brighter-id", rocketmq.PropCorrelationID: "corr", rocketmq.PropHandledCount: c, "tenant": "acme"}}
		m, err := rocketmq.Decode(w, now)
		if err == nil || m.Header.MessageType != message.MTUnacceptable {
			t.Errorf("count %s: err %v, want Unacceptable", c, err)
			continue
		}
		if m.Header.MessageID != "brighter-id" || m.Header.CorrelationID != "corr" || m.Header.Bag["tenant"] != "acme" {
			t.Errorf("count %s: identity lost: %+v", c, m.Header)
		}
		if !strings.HasPrefix(m.Undecodable, "HandledCount") {
			t.Errorf("count %s: Undecodable %q does not name HandledCount", c, m.Undecodable)
		}
	}
}

// FuzzDecodeCountBounded is the hostile-count codec property on
// RocketMQ (docs/adr/0001-delivery-count-contract.md §9): for every
// input the presented count is >= 0; an undecodable one is MT_UNACCEPTABLE
// with a reason; for a decodable one the budget a pump judges
// (broker.BudgetSpent) reaches R by the R-th delivery, forged metadata or
// not. Seeds in testdata/fuzz/FuzzDecodeCountBounded.
func FuzzDecodeCountBounded(f *testing.F) {
	f.Add("9223372036854775807", "", "", "", int32(1), uint8(3))
	f.Add("5", "MT_EVENT", "orders", "2026-01-01T00:00:00.0000000+00:00", int32(1), uint8(3))
	f.Add("x", "MT_QUIT", "", "", int32(math.MaxInt32), uint8(2))
	f.Fuzz(func(t *testing.T, count, mt, origTopic, rejTS string, attempt int32, r uint8) {
		budget := int32(r%10) + 1
		props := map[string]string{rocketmq.PropHandledCount: count, rocketmq.PropMessageType: mt, message.KeyOriginalTopic: origTopic, message.KeyRejectionTimestamp: rejTS}
		w := rocketmq.Wire{Topic: "t", MessageID: "b", Properties: props}
		for k := int32(1); k <= budget+1; k++ {
			a := k
			if k == budget+1 {
				a = attempt // the broker's counter, as hostile as the fuzzer likes
			}
			m, err := rocketmq.Decode(w, now)
			m.Header.HandledCount = rocketmq.DeliveryCount(m.Header.HandledCount, a, m.HasRejectionMetadata())
			m.DeliveryAttempt = int(a)
			if m.Header.HandledCount < 0 || broker.BudgetSpent(m) < 1 {
				t.Fatalf("attempt %d presents %d", a, m.Header.HandledCount)
			}
			if err != nil {
				if m.Header.MessageType != message.MTUnacceptable || m.Undecodable == "" {
					t.Fatalf("undecodable presented as %v, reason %q", m.Header.MessageType, m.Undecodable)
				}
				return
			}
			if m.Header.MessageType.IsLocal() {
				t.Fatalf("a wire message decoded as %v", m.Header.MessageType)
			}
			if k == budget && broker.BudgetSpent(m) < int(budget) {
				t.Fatalf("delivery %d spends %d of budget %d: the pump would not reject it", k, broker.BudgetSpent(m), budget)
			}
		}
	})
}

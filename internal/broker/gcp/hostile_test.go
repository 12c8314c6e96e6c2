package gcp

import (
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// A hostile count: a HandledCount at the limit and beyond (the overflow value
// included) is Unacceptable naming the attribute, with ce-id, correlation
// id, every other attribute and the received value kept.
func TestStampedCountAtLimitAndBeyondIsUnacceptable_R4(t *testing.T) {
	now := time.Unix(1700000000, 0)
	for _, c := range []string{"1000000", "9223372036854775807", "9223372036854775808", "-1", "x"} {
		w := Wire{ID: "ps-1", Data: []byte("b"), Attributes: map[string]string{AttrID: "brighter-id", AttrCorrelationID: "corr", AttrHandledCount: c, "tenant": "acme"}}
		m, err := DecodeOrFailure(w, now)
		if err == nil || m.Header.MessageType != message.MTUnacceptable {
			t.Errorf("count %s: err %v type %v, want Unacceptable", c, err, m.Header.MessageType)
			continue
		}
		if m.Header.MessageID != "brighter-id" || m.Header.CorrelationID != "corr" || m.Header.Bag["tenant"] != "acme" || m.Header.Bag["HandledCountReceived"] != c {
			t.Errorf("count %s: identity lost: %+v", c, m.Header)
		}
		if !strings.HasPrefix(m.Undecodable, "HandledCount attribute") || strings.Contains(m.Undecodable, "\n") {
			t.Errorf("count %s: Undecodable %q, want one line naming HandledCount", c, m.Undecodable)
		}
	}
	w := Wire{ID: "ps-1", Attributes: map[string]string{AttrMessageType: "MT_QUIT"}}
	if m, _ := DecodeOrFailure(w, now); m.WireMessageType != "MT_QUIT" || !strings.HasPrefix(m.Undecodable, "MessageType attribute") {
		t.Errorf("MT_QUIT: WireMessageType %q Undecodable %q", m.WireMessageType, m.Undecodable)
	}
}

// FuzzDecodeCountBounded is the hostile-count codec property on Pub/Sub
// (docs/adr/0001-delivery-count-contract.md §9): for every
// input the presented count is >= 0; an undecodable one is MT_UNACCEPTABLE
// with a reason; for a decodable one the budget a pump judges
// (broker.BudgetSpent) reaches R by the R-th delivery, forged metadata or
// not. Seeds in testdata/fuzz/FuzzDecodeCountBounded.
func FuzzDecodeCountBounded(f *testing.F) {
	f.Add("9223372036854775807", "", "", "", 1, uint8(3))
	f.Add("5", "MT_EVENT", "orders", "2026-01-01T00:00:00.0000000+00:00", 1, uint8(3))
	f.Add("x", "MT_QUIT", "", "", int(^uint(0)>>1), uint8(2))
	f.Fuzz(func(t *testing.T, count, mt, origTopic, rejTS string, attempt int, r uint8) {
		budget := int(r%10) + 1
		attrs := map[string]string{AttrHandledCount: count, AttrMessageType: mt, message.KeyOriginalTopic: origTopic, message.KeyRejectionTimestamp: rejTS}
		now := time.Unix(1700000000, 0)
		m, _ := DecodeOrFailure(Wire{ID: "p", Attributes: attrs}, now)
		present(m, &attempt)
		if m.Header.HandledCount < 0 || broker.BudgetSpent(m) < 1 {
			t.Fatalf("attempt %d: count %d", attempt, m.Header.HandledCount)
		}
		for k := 1; k <= budget; k++ {
			m, err := DecodeOrFailure(Wire{ID: "p", Attributes: attrs}, now)
			present(m, &k)
			if m.Header.HandledCount < 0 {
				t.Fatalf("delivery %d presents %d", k, m.Header.HandledCount)
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
			if k == budget && broker.BudgetSpent(m) < budget {
				t.Fatalf("delivery %d spends %d of budget %d: the pump would not reject it", k, broker.BudgetSpent(m), budget)
			}
		}
	})
}

// An unparseable HandledCount is kept in the bag as HandledCountReceived,
// unless the message carries an attribute of that name itself: that
// attribute is kept as sent.
func TestUnparseableCountKeptUnlessTheMessageCarriesTheKeyItself(t *testing.T) {
	now := time.Unix(1700000000, 0)
	m, _ := DecodeOrFailure(Wire{ID: "p", Attributes: map[string]string{AttrHandledCount: "x"}}, now)
	if got := m.Header.Bag["HandledCountReceived"]; got != "x" {
		t.Errorf("HandledCountReceived = %v, want x", got)
	}
	m, _ = DecodeOrFailure(Wire{ID: "p", Attributes: map[string]string{AttrHandledCount: "x", "HandledCountReceived": "sent"}}, now)
	if got := m.Header.Bag["HandledCountReceived"]; got != "sent" {
		t.Errorf("HandledCountReceived = %v, want the attribute's value, sent", got)
	}
}

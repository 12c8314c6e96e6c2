package limits_test

import (
	"testing"

	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/message"
)

// TestRejectionTextFitsEveryTransport: the bound Stamp cuts
// rejection texts to is the one declared here, and fits every transport's
// attribute value limit (and its attributes' total, where that is the limit).
func TestRejectionTextFitsEveryTransport(t *testing.T) {
	if message.MaxRejectionText != limits.MaxRejectionText {
		t.Fatalf("message.MaxRejectionText %d, limits.MaxRejectionText %d: keep them equal", message.MaxRejectionText, limits.MaxRejectionText)
	}
	for _, tr := range []limits.Transport{limits.SQS, limits.PubSub, limits.RocketMQ} {
		if v := tr.MaxAttributeValueBytes; v > 0 && limits.MaxRejectionText > v {
			t.Errorf("%s: rejection text %d bytes over the attribute value limit %d", tr.Name, limits.MaxRejectionText, v)
		}
		if v := tr.MaxAttributesBytes; v > 0 && 2*limits.MaxRejectionText > v {
			t.Errorf("%s: two rejection texts of %d bytes over the attributes' limit %d", tr.Name, limits.MaxRejectionText, v)
		}
		if tr.MaxLease < tr.MinLease || tr.MaxMessageBytes <= 0 {
			t.Errorf("%s: inconsistent limits %+v", tr.Name, tr)
		}
	}
}

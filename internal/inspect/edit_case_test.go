package inspect

import (
	"testing"

	"github.com/brightergo/brighter/internal/message"
)

// TestEditSet_KeysMatchWhateverTheirCase: `dlq edit --set` compares keys
// without case, as the transports compare a bag key with the header
// attributes: a header field named in another case (CorrelationId, as SQS
// names its attribute) sets the field, not a bag entry no transport would
// send; a bag key the message holds in another case sets that entry under
// its stored spelling, never a second entry differing only in case; stored
// entries differing only in case become one.
func TestEditSet_KeysMatchWhateverTheirCase(t *testing.T) {
	h := EditHeaders{CorrelationID: "c-0", Bag: message.Bag{"Tenant": "acme", "region": "eu"}}
	for _, kv := range [][2]string{{"CorrelationId", "c-1"}, {"tenant", "globex"}, {"REGION", "us"}, {"fixedBy", "ops"}} {
		if err := h.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("--set %s=%s: %v", kv[0], kv[1], err)
		}
	}
	if h.CorrelationID != "c-1" {
		t.Errorf("--set CorrelationId=c-1: correlationId %q, want c-1", h.CorrelationID)
	}
	want := message.Bag{"Tenant": "globex", "region": "us", "fixedBy": "ops"}
	if len(h.Bag) != len(want) {
		t.Errorf("bag %v, want %v (one entry per key whatever its case)", h.Bag, want)
	}
	for k, v := range want {
		if h.Bag[k] != v {
			t.Errorf("bag %v, want %v (one entry per key whatever its case)", h.Bag, want)
			break
		}
	}
	twice := EditHeaders{Bag: message.Bag{"tenant": "a", "TENANT": "b"}}
	if err := twice.Set("Tenant", "c"); err != nil {
		t.Fatal(err)
	}
	if len(twice.Bag) != 1 || twice.Bag["TENANT"] != "c" {
		t.Errorf("stored keys differing only in case after --set Tenant=c: %v, want one entry TENANT: c", twice.Bag)
	}
	if err := (&EditHeaders{}).Set("OriginalTopic", "x"); err == nil {
		t.Error("--set OriginalTopic=x was accepted: rejection keys are refused whatever their case")
	}
}

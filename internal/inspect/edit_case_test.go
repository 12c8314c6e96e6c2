package inspect

import (
	"testing"

	"github.com/brightergo/brighter/internal/message"
)

// TestEditSet_KeysMatchWhateverTheirCase: `dlq edit --set` names a
// header field without case, as the transports compare a bag key with the
// header attributes: a header field named in another case (CorrelationId,
// as SQS names its attribute) sets the field, not a bag entry no transport
// would send. A bag key is case-sensitive, as on the wire: --set tenant=x
// sets tenant and keeps Tenant, and --set Tenant=x sets Tenant and keeps
// tenant; nothing is dropped.
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
	want := message.Bag{"Tenant": "acme", "tenant": "globex", "region": "eu", "REGION": "us", "fixedBy": "ops"}
	if len(h.Bag) != len(want) {
		t.Errorf("bag %v, want %v (bag keys are case-sensitive)", h.Bag, want)
	}
	for k, v := range want {
		if h.Bag[k] != v {
			t.Errorf("bag %v, want %v (bag keys are case-sensitive)", h.Bag, want)
			break
		}
	}
	for _, set := range []string{"tenant", "Tenant"} {
		twice := EditHeaders{Bag: message.Bag{"Tenant": "a", "tenant": "b"}}
		if err := twice.Set(set, "c"); err != nil {
			t.Fatal(err)
		}
		other := map[string]string{"tenant": "Tenant", "Tenant": "tenant"}[set]
		if len(twice.Bag) != 2 || twice.Bag[set] != "c" || twice.Bag[other] != map[string]string{"Tenant": "a", "tenant": "b"}[other] {
			t.Errorf("bag {Tenant: a, tenant: b} after --set %s=c: %v, want %s: c and %s kept", set, twice.Bag, set, other)
		}
	}
	if err := (&EditHeaders{}).Set("OriginalTopic", "x"); err == nil {
		t.Error("--set OriginalTopic=x was accepted: rejection keys are refused whatever their case")
	}
}

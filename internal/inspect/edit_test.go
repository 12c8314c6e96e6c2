package inspect

import (
	"errors"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// TestEditTransform: an edit applies its body, headers and bag to
// the replay copy beside the replay's keys, records editedAt and
// originalBodySha256, and refuses (ErrChanged) a message whose body is not
// the one edited.
func TestEditTransform(t *testing.T) {
	orig := message.New("m1", "orders", message.MTEvent, []byte(`{"a":1}`))
	orig.Header.Bag["tenant"] = "acme"
	stamped := message.Stamp(orig, "orders-dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, time.Now())
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	c, _, err := ReplayCopy(stamped, "sqs://orders-dlq", "orders-dlq", ReplayOptions{}, at)
	if err != nil {
		t.Fatal(err)
	}
	h := HeadersOf(stamped)
	if _, ok := h.Bag[message.KeyOriginalTopic]; ok {
		t.Errorf("the editable bag shows rejection metadata: %v", h.Bag)
	}
	if err := h.Set("correlationId", "c-1"); err != nil {
		t.Fatal(err)
	}
	if err := h.Set("fixedBy", "ops"); err != nil {
		t.Fatal(err)
	}
	if err := h.Set(message.KeyReplayedAt, "x"); err == nil {
		t.Error("--set replayedAt was accepted")
	}
	e := Edit{Body: []byte(`{"a":2}`), Headers: &h, OriginalSHA256: BodySHA256(stamped.Body), At: at}
	if err := e.Transform(stamped, c); err != nil {
		t.Fatal(err)
	}
	if string(c.Body) != `{"a":2}` || c.Header.CorrelationID != "c-1" || c.Header.Bag["fixedBy"] != "ops" || c.Header.Bag["tenant"] != "acme" {
		t.Errorf("edited copy: body %s, header %+v", c.Body, c.Header)
	}
	if c.Header.Bag[KeyEditedAt] != "2026-12-04T10:00:00Z" || c.Header.Bag[KeyOriginalBodySHA256] != BodySHA256([]byte(`{"a":1}`)) || c.Header.Bag[message.KeyReplayedFrom] != "sqs://orders-dlq" {
		t.Errorf("edited copy's bag: %v", c.Header.Bag)
	}

	// A partition key set by the edit gets a fresh deduplication id (SQS
	// FIFO would otherwise drop a re-send); removing it drops the id.
	h.PartitionKey = "g1"
	if err := e.Transform(stamped, c); err != nil {
		t.Fatal(err)
	}
	if id, _ := c.Header.Bag[KeyDeduplicationID].(string); c.Header.PartitionKey != "g1" || id == "" {
		t.Errorf("partition key %q, deduplication id %q", c.Header.PartitionKey, id)
	}
	h.PartitionKey = ""
	if err := e.Transform(stamped, c); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Header.Bag[KeyDeduplicationID]; ok {
		t.Error("a deduplication id without a partition key")
	}

	other := stamped.Clone()
	other.Body = []byte(`{"a":3}`)
	if err := e.Transform(other, c); !errors.Is(err, ErrChanged) {
		t.Errorf("a changed original: %v, want ErrChanged", err)
	}
	if err := ValidateBody("application/json; charset=utf-8", []byte(`{`)); !errors.Is(err, ErrInvalidBody) {
		t.Errorf("ValidateBody of broken JSON: %v", err)
	}
	if err := ValidateBody("text/plain", []byte(`{`)); err != nil {
		t.Errorf("ValidateBody of text: %v", err)
	}
	if !IsJSON("application/cloudevents+json") || IsJSON("text/plain") {
		t.Error("IsJSON")
	}
}

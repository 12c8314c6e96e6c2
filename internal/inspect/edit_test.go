package inspect

import (
	"errors"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// TestEditTransform_AppliesTheEditAndRefusesAChangedBody: an edit applies its
// body, headers and bag to the replay copy beside the replay's keys, records
// editedAt and originalBodySha256, and refuses (ErrChanged) a message whose
// body is not the one edited.
func TestEditTransform_AppliesTheEditAndRefusesAChangedBody(t *testing.T) {
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

// TestEditTransform_OtherCopyOfTheID: an edit of the headers made on one
// stored copy of an id (From: the headers it started from) is not applied
// to another copy whose bag differs (ErrChanged, nothing changed), while a
// copy with the same body and headers takes it; EditDiffers names what
// differs (the body always, the headers only for a headers edit).
func TestEditTransform_OtherCopyOfTheID(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	stored := func(tenant string, rejected time.Time) *message.Message {
		m := message.New("m1", "orders", message.MTEvent, []byte(`{"a":1}`))
		m.Header.Bag["tenant"] = tenant
		return message.Stamp(m, "orders-dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, rejected)
	}
	first, same, other := stored("acme", at), stored("acme", at.Add(time.Second)), stored("zenith", at)
	h := HeadersOf(first)
	from := HeadersOf(first)
	if err := h.Set("fixedBy", "ops"); err != nil {
		t.Fatal(err)
	}
	e := Edit{Body: []byte(`{"a":2}`), Headers: &h, From: &from, OriginalSHA256: BodySHA256(first.Body), At: at}
	for _, m := range []*message.Message{first, same} {
		c, _, err := ReplayCopy(m, "sqs://orders-dlq", "orders-dlq", ReplayOptions{}, at)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Transform(m, c); err != nil || c.Header.Bag["fixedBy"] != "ops" {
			t.Errorf("a copy with the edited headers: %v, bag %v", err, c.Header.Bag)
		}
	}
	c, _, err := ReplayCopy(other, "sqs://orders-dlq", "orders-dlq", ReplayOptions{}, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Transform(other, c); !errors.Is(err, ErrChanged) || c.Header.Bag["tenant"] != "zenith" {
		t.Errorf("a copy whose bag differs: %v (bag %v), want ErrChanged and the bag untouched", err, c.Header.Bag)
	}
	if got := EditDiffers(first, same, true); got != "" {
		t.Errorf("EditDiffers of two copies of one message: %q", got)
	}
	if got := EditDiffers(first, other, true); got != "headers" {
		t.Errorf("EditDiffers of copies whose bags differ, headers edited: %q, want headers", got)
	}
	if got := EditDiffers(first, other, false); got != "" {
		t.Errorf("EditDiffers of copies whose bags differ, body edited: %q, want none", got)
	}
	changed := first.Clone()
	changed.Body = []byte(`{"a":9}`)
	if got := EditDiffers(first, changed, false); got != "body" {
		t.Errorf("EditDiffers of copies whose bodies differ: %q, want body", got)
	}
}

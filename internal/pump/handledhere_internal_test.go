package pump

import (
	"testing"

	"github.com/brightergo/brighter/internal/message"
)

// A failed acknowledgement is recorded until forgotten: ackRetry reports it
// for its id alone, a second failure keeps one record (counted once in
// failed), and forget ends it.
func TestHandledHereRecordsAFailedAcknowledgementUntilForgotten(t *testing.T) {
	h := newHandledHere(8)
	if h.ackRetry("m1") {
		t.Fatal("ackRetry(m1) before any failure = true")
	}
	h.ackFailed("m1")
	if !h.ackRetry("m1") || h.ackRetry("m2") {
		t.Fatalf("after m1's failure: ackRetry(m1) = %v, ackRetry(m2) = %v; want true, false", h.ackRetry("m1"), h.ackRetry("m2"))
	}
	h.ackFailed("m1") // the retried acknowledgement failed too
	if n := h.failed.Load(); n != 1 {
		t.Fatalf("failed = %d after two failures of one message, want 1", n)
	}
	if h.rejection("m1") != nil {
		t.Error("a failed acknowledgement reads as a failed rejection")
	}
	if _, judged := h.lookup("m1", ""); judged != 0 {
		t.Errorf("a failed acknowledgement reads as a budget judgement (judged %d)", judged)
	}
	h.forget("m1", "")
	if h.ackRetry("m1") || h.failed.Load() != 0 {
		t.Errorf("after forget: ackRetry(m1) = %v, failed = %d; want false, 0", h.ackRetry("m1"), h.failed.Load())
	}
}

// An id the transport could not give is never recorded: its deliveries
// cannot be told apart.
func TestHandledHereIgnoresAnEmptyID(t *testing.T) {
	h := newHandledHere(8)
	h.ackFailed("")
	if h.ackRetry("") || h.failed.Load() != 0 || len(h.entries) != 0 {
		t.Errorf("an empty id was recorded: ackRetry %v, failed %d, entries %d", h.ackRetry(""), h.failed.Load(), len(h.entries))
	}
}

// A message's handler runs counted before its acknowledgement failed stay
// with it, and failed counts the entry once whatever failed settles it
// records.
func TestHandledHereFailedAcknowledgementKeepsTheRuns(t *testing.T) {
	h := newHandledHere(8)
	h.ran("m1", "")
	h.ran("m1", "")
	h.ackFailed("m1")
	if runs, _ := h.lookup("m1", ""); runs != 2 {
		t.Errorf("runs = %d after two runs and a failed acknowledgement, want 2", runs)
	}
	h.rejectionFailed("m2", message.Rejection{Reason: message.ReasonDeliveryError}, Reject)
	h.ackFailed("m2")
	if n := h.failed.Load(); n != 2 {
		t.Errorf("failed = %d for two messages, want 2", n)
	}
	h.forget("m2", "")
	h.forget("m1", "")
	if n := h.failed.Load(); n != 0 {
		t.Errorf("failed = %d once both were forgotten, want 0", n)
	}
}

// The record is bounded: a failed acknowledgement evicted by newer entries
// is forgotten (its message costs one more handler run) and no longer
// counted, so arrivals are back on the path with no look-up.
func TestHandledHereEvictsTheOldestFailedAcknowledgement(t *testing.T) {
	h := newHandledHere(2)
	h.ackFailed("m1")
	h.ran("m2", "")
	h.ran("m3", "") // evicts m1
	if h.ackRetry("m1") {
		t.Error("m1 still recorded after two newer entries filled a record of 2")
	}
	if n := h.failed.Load(); n != 0 {
		t.Errorf("failed = %d after the only failed entry was evicted, want 0", n)
	}
	h.ackFailed("m4") // evicts m2
	if !h.ackRetry("m4") || h.failed.Load() != 1 {
		t.Errorf("ackRetry(m4) = %v, failed = %d; want true, 1", h.ackRetry("m4"), h.failed.Load())
	}
}

// The arrival path costs no allocation, with failures recorded or not.
func TestHandledHereAckRetryAllocatesNothing(t *testing.T) {
	h := newHandledHere(8)
	if n := testing.AllocsPerRun(100, func() { _ = h.ackRetry("m1") }); n != 0 {
		t.Errorf("ackRetry with nothing recorded allocates %v times, want 0", n)
	}
	h.ackFailed("m2")
	if n := testing.AllocsPerRun(100, func() { _ = h.ackRetry("m1") }); n != 0 {
		t.Errorf("ackRetry with a failure recorded allocates %v times, want 0", n)
	}
}

package message_test

import (
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// Each Stamp adds its destination to the copy's rejectionPath, oldest
// first; RoutedTo finds an entry and nothing else; StripRejection clears
// the path, so a replayed message may be routed to the same places again.
func TestStampExtendsRejectionPath(t *testing.T) {
	rej := message.Rejection{Reason: message.ReasonDeliveryError}
	now := time.Now()
	m := message.New("m1", "qa", message.MTEvent, []byte("{}"))
	if message.RoutedTo(m, "qb") || message.RejectionPath(m) != "" {
		t.Fatalf("a fresh message has path %q", message.RejectionPath(m))
	}
	c1 := message.Stamp(m, "qb", rej, now)
	c2 := message.Stamp(c1, "qa", rej, now)
	if got := message.RejectionPath(c2); got != "qb,qa" {
		t.Fatalf("path after two routings = %q, want qb,qa", got)
	}
	if message.RejectionPath(m) != "" || message.RejectionPath(c1) != "qb" {
		t.Errorf("Stamp changed its input: %q, %q", message.RejectionPath(m), message.RejectionPath(c1))
	}
	for dest, want := range map[string]bool{"qa": true, "qb": true, "q": false, "qa,qb": false, "b,q": false, "": false} {
		if got := message.RoutedTo(c2, dest); got != want {
			t.Errorf("RoutedTo(%q) = %v, want %v", dest, got, want)
		}
	}
	message.StripRejection(c2.Header.Bag)
	if message.RoutedTo(c2, "qb") {
		t.Errorf("StripRejection left the path: %v", c2.Header.Bag)
	}
}

// A path that would pass MaxRejectionPath loses its oldest entries, so it
// always fits an attribute and still holds the latest destinations; a
// path that is not a string holds nothing.
func TestRejectionPathBounded(t *testing.T) {
	rej := message.Rejection{Reason: message.ReasonDeliveryError}
	m := message.New("m1", "src", message.MTEvent, []byte("{}"))
	name := func(i int) string { return strings.Repeat("x", 90) + string(rune('a'+i%26)) + string(rune('a'+i/26)) }
	for i := range 40 {
		m = message.Stamp(m, name(i), rej, time.Now())
		if n := len(message.RejectionPath(m)); n > message.MaxRejectionPath {
			t.Fatalf("path of %d bytes after %d routings", n, i+1)
		}
	}
	for i := 31; i < 40; i++ {
		if !message.RoutedTo(m, name(i)) {
			t.Errorf("recent destination %d dropped from the path", i)
		}
	}
	if message.RoutedTo(m, name(0)) {
		t.Errorf("oldest destination kept past the bound")
	}
	m.Header.Bag[message.KeyRejectionPath] = 3.0
	if message.RoutedTo(m, "3") {
		t.Errorf("a number read as a path")
	}
}

// TestTrailingRun_CountsMatchingEntriesAtTheEnd: TrailingRun counts the
// consecutive entries at the end of a path that match; ExtendPath appends as
// Stamp does.
func TestTrailingRun_CountsMatchingEntriesAtTheEnd(t *testing.T) {
	isD := func(e string) bool { return e == "d" }
	for path, want := range map[string]int{"": 0, "d": 1, "d,d": 2, "a,d,d": 2, "d,a": 0, "d,a,d": 1, "dd": 0, "x-d,d": 1} {
		if got := message.TrailingRun(path, isD); got != want {
			t.Errorf("TrailingRun(%q) = %d, want %d", path, got, want)
		}
	}
	if got := message.ExtendPath("a,d", "d"); got != "a,d,d" {
		t.Errorf("ExtendPath = %q, want a,d,d", got)
	}
}

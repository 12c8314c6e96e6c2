package sqs

import (
	"strings"
	"testing"
)

// TestNames_NeverCut: QueueName and TopicName never return a name shorter
// than the one given, however long (a cut name is another queue's), and a
// name over SQS's 80 characters comes back whole.
func TestNames_NeverCut(t *testing.T) {
	for _, name := range []string{"q", "fifo", "orders.fifo", "orders_fifo", "a.b.c",
		strings.Repeat("q", 80), strings.Repeat("q", 81), strings.Repeat("q", 100),
		strings.Repeat("q", 76) + ".fifo", strings.Repeat("t", 300), strings.Repeat("t.", 200) + "fifo"} {
		for _, fifo := range []bool{false, true} {
			for fn, got := range map[string]string{"QueueName": QueueName(name, fifo), "TopicName": TopicName(name, fifo)} {
				if len(got) < len(name) {
					t.Errorf("%s(%d characters, fifo %v) = %d characters: cut short", fn, len(name), fifo, len(got))
				}
				want := strings.ReplaceAll(name, ".", "_")
				if fifo {
					want = strings.TrimSuffix(want, "_fifo")
					want = strings.TrimSuffix(want, "fifo") // a name ending in "fifo" loses its last five characters
				}
				if !strings.HasPrefix(got, want) {
					t.Errorf("%s(%q, %v) = %q: does not begin with %q", fn, name, fifo, got, want)
				}
			}
		}
	}
	if got := QueueName(strings.Repeat("q", 100), false); got != strings.Repeat("q", 100) {
		t.Errorf("QueueName(100 q's) = %d characters, want the 100", len(got))
	}
}

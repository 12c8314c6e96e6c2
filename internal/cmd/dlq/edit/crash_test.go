package edit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQ_EditSIGKILL_NeverNowhere: dlq edit killed with SIGKILL at
// random instants while it reads, publishes the edited copy and removes
// the original: each message is in the DLQ, or its edited copy (with
// originalBodySha256) at its destination, or both, never nowhere; an
// unkilled edit afterwards moves what is left.
func TestDLQ_EditSIGKILL_NeverNowhere(t *testing.T) {
	t.Parallel() // its own queues; `brighter` processes and waits for a visibility timeout
	const n = 8
	dlq, dest, conn := dlqtest.CrashQueue(t, n)
	body := dlqtest.FixedBody(t)
	edit := func(i int) []string {
		return append([]string{"dlq", "edit", fmt.Sprintf("c%d", i), "sqs://" + dlq, "--to", dest, "--body-file", body, "--visibility", "2s", "--wait", "1s"}, conn...)
	}
	destIDs := func() map[string]int {
		out, err := dlqtest.CrashCmd(t, append([]string{"dlq", "peek", "sqs://" + dest, "-o", "json", "--wait", "1s"}, conn...)...).Output()
		if err != nil {
			t.Fatalf("peek %s: %v", dest, err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			if len(line) > 0 && !bytes.Contains(line, []byte(`"originalBodySha256":"`)) {
				t.Errorf("a message at the destination is not an edited copy: %s", line)
			}
		}
		return dlqtest.CrashIDs(t, out)
	}
	for i := range n {
		dlqtest.SigkillAfter(t, time.Duration(50+rand.IntN(1500))*time.Millisecond, edit(i)...)
		at := destIDs()
		t.Logf("c%d killed: %d edited copies at the destination", i, len(at))
		dlqtest.CrashPeekIDs(t, dlq, conn, n, at)
	}
	for i := range n {
		if out, err := dlqtest.CrashCmd(t, edit(i)...).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("is not in")) {
			t.Fatalf("edit c%d after the kills: %v\n%s", i, err, out)
		}
	}
	got := destIDs()
	for i := range n {
		if got[fmt.Sprintf("c%d", i)] == 0 {
			t.Errorf("c%d's edited copy is not at %s", i, dest)
		}
	}
	if left := dlqtest.CrashPeekIDs(t, dlq, conn, 0, nil); len(left) != 0 {
		t.Fatalf("the DLQ still holds %v after every edit", left)
	}
}

// TestDLQ_EditSIGKILL_NeverNowhere_PubSubAndRocketMQ: dlq edit
// killed with SIGKILL at a random instant, once per message, on the
// RocketMQ test broker and Google's Pub/Sub emulator: each message is in
// the dead-letter destination, or its edited copy at the destination, or
// both, never nowhere; unkilled edits afterwards move what is left.
func TestDLQ_EditSIGKILL_NeverNowhere_PubSubAndRocketMQ(t *testing.T) {
	t.Parallel() // destinations of its own; `brighter` processes and waits for leases
	const n = 4
	for _, b := range dlqtest.CrashBrokers(t, n) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			body := dlqtest.FixedBody(t)
			edit := func(i int) []string {
				return []string{"dlq", "edit", fmt.Sprintf("c%d", i), "orders", "-c", b.File, "--to", b.Dest, "--body-file", body, "--visibility", "2s", "--wait", "1s"}
			}
			peek := []string{"dlq", "peek", "orders", "-c", b.File, "-o", "json", "--wait", "1s"}
			// Every copy at the destination is an edited one; the ids seen
			// there accumulate (a read of a Pub/Sub subscription holds what
			// it reads until its ack deadline, so a second read may miss it).
			at := map[string]int{}
			destIDs := func() map[string]int {
				out, err := dlqtest.CrashCmd(t, b.PeekDest...).Output()
				if err != nil {
					t.Fatalf("peek %s: %v", b.Dest, err)
				}
				for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
					if len(line) > 0 && !bytes.Contains(line, []byte(`"originalBodySha256":"`)) {
						t.Errorf("a message at the destination is not an edited copy: %s", line)
					}
				}
				for id := range dlqtest.CrashIDs(t, out) {
					at[id]++
				}
				return at
			}
			for i := range n {
				dlqtest.SigkillAfter(t, time.Duration(50+rand.IntN(1500))*time.Millisecond, edit(i)...)
				dlqtest.CrashAwaitAll(t, peek, n, destIDs())
			}
			// Unkilled edits until every message has its edited copy at the
			// destination and the dead-letter destination is empty: a
			// message an earlier run (or scan) still holds is "not in" it
			// until the hold lapses, and is edited on a later pass.
			deadline := time.Now().Add(90 * time.Second)
			for {
				out, err := dlqtest.CrashCmd(t, peek...).Output()
				if err != nil {
					t.Fatalf("peek: %v", err)
				}
				left, got := dlqtest.CrashIDs(t, out), destIDs()
				var pending []int
				for i := range n {
					if id := fmt.Sprintf("c%d", i); got[id] == 0 || left[id] > 0 {
						pending = append(pending, i)
					}
				}
				if len(pending) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("90s after the kills: edited copies at %s %v, still in the dead-letter destination %v", b.Dest, got, left)
				}
				for _, i := range pending {
					// "is not in" / "not selected on the second read": held by
					// a killed run's read until its invisible duration lapses;
					// the next pass edits it.
					if out, err := dlqtest.CrashCmd(t, edit(i)...).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("is not in")) && !bytes.Contains(out, []byte("not selected on the second read")) {
						t.Fatalf("edit c%d after the kills: %v\n%s", i, err, out)
					}
				}
				time.Sleep(500 * time.Millisecond)
			}
		})
	}
}

package replay

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter: dlq replay --copy
// killed with SIGKILL at random instants never removes a dead letter:
// every message is still in the DLQ once the killed run's hold lapses.
func TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter(t *testing.T) {
	t.Parallel() // its own queues; `brighter` processes and waits for a visibility timeout
	const n = 1000
	dlq, dest, conn := dlqtest.CrashQueue(t, n)
	args := append([]string{"dlq", "replay", "sqs://" + dlq, "--copy", "--yes", "--to", dest, "--visibility", "2s", "--wait", "1s"}, conn...)
	for range 3 {
		dlqtest.SigkillAfter(t, time.Duration(20+rand.IntN(600))*time.Millisecond, args...)
		dlqtest.CrashPeekIDs(t, dlq, conn, n, nil)
	}
}

// TestDLQ_ReplaySIGKILL_ResumesExactlyOnce: dlq replay (move)
// killed with SIGKILL at random instants, three times, then run to the end
// with the same journal: the dead-letter queue ends empty, every message is
// at the destination, and a message is there twice only when its copy was
// in flight (recorded "sending", not "sent") at one of the kills: what a
// killed run had finished is neither lost nor sent again.
func TestDLQ_ReplaySIGKILL_ResumesExactlyOnce(t *testing.T) {
	t.Parallel() // its own queues; `brighter` processes and waits for a visibility timeout
	const n = 1000
	dlq, dest, conn := dlqtest.CrashQueue(t, n)
	journal := filepath.Join(t.TempDir(), "replay.journal")
	// --rate spreads the run over about 2.5s, so each kill lands mid-run.
	args := append([]string{"dlq", "replay", "sqs://" + dlq, "--yes", "--to", dest, "--journal", journal, "--rate", "400", "--visibility", "2s", "--wait", "1s"}, conn...)
	inFlight := map[string]bool{} // replay ids in flight at a kill
	for range 3 {
		dlqtest.SigkillAfter(t, time.Duration(50+rand.IntN(550))*time.Millisecond, args...)
		data, _ := os.ReadFile(journal)
		state := map[string]string{}
		for _, line := range strings.Split(string(data), "\n") {
			if kind, rid, ok := strings.Cut(line, " "); ok {
				if kind == "sending" && state[rid] != "" {
					continue
				}
				state[rid] = kind
			}
		}
		for rid, kind := range state {
			if kind == "sending" {
				inFlight[rid] = true
			}
		}
		delivered := dlqtest.CrashDestIDs(t, dest, conn)
		t.Logf("after the kill: %d copies at the destination, %d in flight so far", len(delivered), len(inFlight))
		dlqtest.CrashPeekIDs(t, dlq, conn, n, delivered)
	}
	out, err := dlqtest.CrashCmd(t, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("the last replay: %v\n%s", err, out)
	}
	t.Logf("the last replay:\n%s", dlqtest.LastLines(string(out), 4))
	if _, err := os.Stat(journal); !os.IsNotExist(err) {
		t.Errorf("the journal %s was kept after a complete replay (stat: %v)", journal, err)
	}
	dups := dlqtest.CrashDuplicatesInFlight(t, dlqtest.CrashDestCopies(t, dest, conn), n, inFlight, "any kill")
	t.Logf("%d of %d delivered twice, each in flight at a kill", dups, n)
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 0 {
		t.Fatalf("the DLQ still holds %d messages after a complete replay", len(left))
	}
}

// TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter_PubSubAndRocketMQ:
// dlq replay --copy killed with SIGKILL at random instants on the RocketMQ
// test broker and Google's Pub/Sub emulator never removes a dead letter:
// every message is back in the dead-letter destination once the killed
// run's hold lapses.
func TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter_PubSubAndRocketMQ(t *testing.T) {
	t.Parallel() // destinations of its own; `brighter` processes and waits for leases
	const n = 600
	for _, b := range dlqtest.CrashBrokers(t, n) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			args := []string{"dlq", "replay", "orders", "-c", b.File, "--copy", "--yes", "--to", b.Dest, "--visibility", "2s", "--wait", "1s"}
			peek := []string{"dlq", "peek", "orders", "-c", b.File, "-o", "json", "--wait", "1s"}
			for range b.Kills {
				dlqtest.SigkillAfter(t, time.Duration(50+rand.IntN(550))*time.Millisecond, args...)
				dlqtest.CrashAwaitAll(t, peek, n, nil)
			}
		})
	}
}

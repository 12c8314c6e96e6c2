package archive

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQ_ArchiveSIGKILL_NeverNowhere: dlq archive killed with
// SIGKILL at random instants, three times in a row appending to one file:
// every message is in the DLQ or in the archive (or both), never nowhere;
// a last, unkilled archive empties the DLQ into the file.
func TestDLQ_ArchiveSIGKILL_NeverNowhere(t *testing.T) {
	t.Parallel() // its own queues; `brighter` processes and waits for a visibility timeout
	const n = 1000
	dlq, _, conn := dlqtest.CrashQueue(t, n)
	file := filepath.Join(t.TempDir(), "archive.jsonl")
	args := append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", file, "--visibility", "2s", "--wait", "1s"}, conn...)
	for range 3 {
		dlqtest.SigkillAfter(t, time.Duration(20+rand.IntN(600))*time.Millisecond, args...)
		data, _ := os.ReadFile(file)
		archived := dlqtest.CrashIDs(t, data)
		t.Logf("%d of %d in the archive after the kill", len(archived), n)
		dlqtest.CrashPeekIDs(t, dlq, conn, n, archived)
	}
	last := dlqtest.CrashCmd(t, args...)
	last.Env = cmdtest.Env()
	if out, err := last.CombinedOutput(); err != nil {
		t.Fatalf("the last archive: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(file)
	got := dlqtest.CrashIDs(t, data)
	for i := range n {
		if got[fmt.Sprintf("c%d", i)] == 0 {
			t.Errorf("c%d is not in the archive", i)
		}
	}
	if left := dlqtest.CrashPeekIDs(t, dlq, conn, n, got); len(left) != 0 {
		t.Fatalf("the DLQ still holds %v after a complete archive", left)
	}
}

// TestDLQ_ArchiveSIGKILL_NeverNowhere_PubSubAndRocketMQ: dlq
// archive killed with SIGKILL at a random instant on the RocketMQ test
// broker (three kills, messages held for --visibility) and on Google's
// Pub/Sub emulator (one kill: a killed pull's messages come back when the
// subscription's 10 s ack deadline lapses): every message is in the
// dead-letter destination or in the archive, never nowhere; unkilled
// archives then empty the destination into the file.
func TestDLQ_ArchiveSIGKILL_NeverNowhere_PubSubAndRocketMQ(t *testing.T) {
	t.Parallel() // destinations of its own; `brighter` processes and waits for leases
	const n = 600
	for _, b := range dlqtest.CrashBrokers(t, n) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			archive := filepath.Join(t.TempDir(), "archive.jsonl")
			args := []string{"dlq", "archive", "orders", "-c", b.File, "--all", "--file", archive, "--visibility", "2s", "--wait", "1s"}
			peek := []string{"dlq", "peek", "orders", "-c", b.File, "-o", "json", "--wait", "1s"}
			for range b.Kills {
				dlqtest.SigkillAfter(t, time.Duration(50+rand.IntN(550))*time.Millisecond, args...)
				data, _ := os.ReadFile(archive)
				archived := dlqtest.CrashIDs(t, data)
				t.Logf("%d of %d in the archive after the kill", len(archived), n)
				dlqtest.CrashAwaitAll(t, peek, n, archived)
			}
			// Unkilled archives until the destination reads empty: what the
			// killed run held (archived, not yet removed) comes back when its
			// hold lapses and goes into the file a second time.
			deadline := time.Now().Add(60 * time.Second)
			for {
				if out, err := dlqtest.CrashCmd(t, args...).CombinedOutput(); err != nil {
					t.Fatalf("an unkilled archive: %v\n%s", err, out)
				}
				out, err := dlqtest.CrashCmd(t, peek...).Output()
				if err != nil {
					t.Fatalf("peek: %v", err)
				}
				left := dlqtest.CrashIDs(t, out)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the dead-letter destination still holds %d messages a minute after the kills", len(left))
				}
			}
			data, _ := os.ReadFile(archive)
			got := dlqtest.CrashIDs(t, data)
			for i := range n {
				if got[fmt.Sprintf("c%d", i)] == 0 {
					t.Errorf("c%d is not in the archive", i)
				}
			}
		})
	}
}

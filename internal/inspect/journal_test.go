package inspect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJournal_HeldEntriesKeepADrainedJournal: a copy recorded sent
// less than its run's hold ago keeps the journal even after a drained run
// (a killed run may still hold its message invisible); once the hold has
// passed, or for a line written before holds were recorded, it does not; a
// "sent" line with a malformed time is refused, naming the line.
func TestJournal_HeldEntriesKeepADrainedJournal(t *testing.T) {
	dir := t.TempDir()
	open := func(name string, hold time.Duration, now time.Time) *FileJournal {
		t.Helper()
		j, err := OpenJournal(filepath.Join(dir, name), hold)
		if err != nil {
			t.Fatal(err)
		}
		j.now = func() time.Time { return now }
		return j
	}
	t0 := time.Now()
	j := open("held", time.Minute, t0)
	if err := j.Published([]string{"r1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Close(true, false); err != nil {
		t.Fatal(err)
	}
	j = open("held", time.Minute, t0.Add(59*time.Second))
	if j.Held() != 1 || j.Pending() != 1 {
		t.Fatalf("59s after a 1m hold: held %d, pending %d; want 1, 1", j.Held(), j.Pending())
	}
	if removed, err := j.Close(false, true); err != nil || removed {
		t.Fatalf("a drained clean run within the hold: removed %v, %v; want the journal kept", removed, err)
	}
	j = open("held", time.Minute, t0.Add(61*time.Second))
	if j.Held() != 0 {
		t.Fatalf("61s after a 1m hold: held %d, want 0", j.Held())
	}
	if removed, err := j.Close(false, true); err != nil || !removed {
		t.Fatalf("a drained clean run after the hold: removed %v, %v; want the journal deleted", removed, err)
	}

	if err := os.WriteFile(filepath.Join(dir, "old"), []byte("sending r2\nsent r2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	j = open("old", time.Minute, t0)
	if j.Held() != 0 || j.Pending() != 1 || !j.Sent("r2") {
		t.Fatalf("an older \"sent RID\" line: held %d, pending %d, sent %v; want 0, 1, true", j.Held(), j.Pending(), j.Sent("r2"))
	}
	if removed, err := j.Close(false, true); err != nil || !removed {
		t.Fatalf("a drained clean run with an older line: removed %v, %v; want deleted", removed, err)
	}

	for _, bad := range []string{"sent r3 12x 5000\n", "sent r3 1000\n", "sent r3 -1 5\n"} {
		if err := os.WriteFile(filepath.Join(dir, "bad"), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenJournal(filepath.Join(dir, "bad"), time.Minute); err == nil || !strings.Contains(err.Error(), "bad:1: not a journal line") {
			t.Errorf("journal %q: %v, want line 1 refused", bad, err)
		}
	}
}

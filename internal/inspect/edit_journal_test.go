package inspect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJournal_EmptyReplayIDs: the lines with an empty replay id an older
// dlq edit wrote ("sending ", "sent  AT HOLD", "removed ") are passed over
// and counted (NoID): they name no copy, so nothing is taken as sent or in
// flight; a record of a copy without a replay id is refused (nothing is
// written), so a journal never gets such a line again; a line of no form
// refuses the journal, naming the line and what to do with it.
func TestJournal_EmptyReplayIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	old := "sending \nsent  1700000000000 300000\nremoved \nsent \n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(path, time.Minute)
	if err != nil {
		t.Fatalf("open a journal with empty replay ids: %v", err)
	}
	if j.NoID() != 4 || j.Pending() != 0 || len(j.InFlight()) != 0 || j.Sent("") {
		t.Errorf("NoID %d, Pending %d, InFlight %v, Sent(\"\") %v; want 4, 0, none, false", j.NoID(), j.Pending(), j.InFlight(), j.Sent(""))
	}
	for name, rec := range map[string]func([]string) error{"Sending": j.Sending, "Published": j.Published, "Removed": j.Removed} {
		if err := rec([]string{"r1", ""}); !errors.Is(err, errNoReplayID) {
			t.Errorf("%s of a copy without a replay id: %v, want errNoReplayID", name, err)
		}
	}
	if _, err := j.Close(true, false); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != old {
		t.Errorf("a refused record wrote to the journal: %q", data)
	}
	if err := os.WriteFile(path, []byte("sending r1\nsent r1 x y z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = OpenJournal(path, time.Minute)
	if err == nil || !strings.Contains(err.Error(), path+":2: not a journal line") || !strings.Contains(err.Error(), "correct or delete that line") {
		t.Errorf("a damaged line: %v, want it named with what to do", err)
	}
}

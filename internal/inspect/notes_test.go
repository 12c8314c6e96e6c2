package inspect_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/inspect"
)

// TestGroupNotes_KeptPerDestinationAndGroupAndPersisted: a note is kept per
// destination and group (another destination's group of the same id has its
// own), read back after a new GroupNotes opens the file, replaced by a second
// Set, and removed by an empty one; the file is private to its user.
func TestGroupNotes_KeptPerDestinationAndGroupAndPersisted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "notes.json")
	n := inspect.NewGroupNotes(path)
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	if got, err := n.Read("sqs://a"); err != nil || len(got) != 0 {
		t.Fatalf("no file yet: %v, %v", got, err)
	}
	if err := n.Set("sqs://a", "g1", inspect.GroupNote{Text: "first", By: "ana@h", At: at}); err != nil {
		t.Fatal(err)
	}
	if err := n.Set("sqs://b", "g1", inspect.GroupNote{Text: "other queue", At: at}); err != nil {
		t.Fatal(err)
	}
	if err := n.Set("sqs://a", "g1", inspect.GroupNote{Text: "second", By: "ben@h", At: at}); err != nil {
		t.Fatal(err)
	}
	got, err := inspect.NewGroupNotes(path).Read("sqs://a")
	if err != nil || len(got) != 1 || got["g1"].Text != "second" || got["g1"].By != "ben@h" || !got["g1"].At.Equal(at) {
		t.Fatalf("notes of sqs://a: %v, %v", got, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the notes file: %v, %v; want mode 0600", st, err)
	}
	if err := n.Set("sqs://a", "g1", inspect.GroupNote{Text: "  "}); err != nil {
		t.Fatal(err)
	}
	if got, _ := n.Read("sqs://a"); len(got) != 0 {
		t.Errorf("an empty note kept: %v", got)
	}
	if got, _ := n.Read("sqs://b"); got["g1"].Text != "other queue" {
		t.Errorf("another destination's note: %v", got)
	}
}

package inspect_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/inspect"
)

// TestTriageRocketMQ_GroupCopyArchiveRestore (the RocketMQ test
// broker, real client): a failure group selects its two messages; a copy
// publishes them and keeps them pending for the reader group; an archive of
// the group writes and acknowledges them; a restore publishes them back to
// the dead-letter topic.
func TestTriageRocketMQ_GroupCopyArchiveRestore(t *testing.T) {
	e := newRMQ(t)
	dlq, a, _ := e.seed(t)
	src := e.source(t, dlq)
	// Each scan below starts right after the previous one released what it
	// held; a receive that waits only 300 ms can come back empty under load
	// (CI saw the copy select nothing) and end the scan.
	src.Wait = 2 * time.Second
	st, _, err := inspect.Collect(context.Background(), src, inspect.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	g := groupsByMessage(t, st)["order <n> timed out"]
	group := inspect.Filter{GroupIDs: []string{g.ID}}

	sum, err := inspect.Replay(context.Background(), src, dlq, e.producer(t), group, inspect.ReplayOptions{Copy: true})
	if err != nil || sum.Replayed != 2 || sum.Failed != 0 {
		t.Fatalf("copy: %+v %v", sum, err)
	}
	if got := strings.Join(e.arrivedIDs(a), " "); got != "m1 m2" && got != "m2 m1" {
		t.Fatalf("%s holds %q, want m1 m2", a, got)
	}
	if n := e.srv.Pending(dlq, readerGroup); n != 5 {
		t.Fatalf("reader group has %d pending after a copy, want all 5", n)
	}

	buf := &syncedBuffer{}
	as, err := inspect.Archive(context.Background(), src, group, buf, buf.sync)
	if err != nil || as.Archived != 2 || as.Failed != 0 {
		t.Fatalf("archive: %+v %v", as, err)
	}
	if n := e.srv.Pending(dlq, readerGroup); n != 3 {
		t.Fatalf("reader group has %d pending after the archive, want 3", n)
	}
	ms, err := inspect.ReadArchive(strings.NewReader(buf.synced), "archive")
	if err != nil || sortedIDs(ms) != "m1 m2" {
		t.Fatalf("archive holds %v, %v; want m1 m2", sortedIDs(ms), err)
	}
	rs, err := inspect.Restore(context.Background(), e.producer(t), ms, dlq, discardLogger(), nil)
	if err != nil || rs.Restored != 2 {
		t.Fatalf("restore: %+v %v", rs, err)
	}
	if got := sortedIDs(peekJSON(t, src, group)); got != "m1 m2" {
		t.Fatalf("after restore the group holds %q, want m1 m2", got)
	}
}

package archive

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/inspect"
)

// TestDLQArchive_PipeReaderLeavesEarly: against fauxqs, `dlq archive --all
// --file - | head -n 2` over 30 messages, head reading only once brighter
// waits for it (so its one read takes the first receive's records whole).
// head keeps two lines and exits; brighter's next write to the pipe fails (EPIPE)
// instead of killing it with SIGPIPE. It exits 141 saying so, and no
// message is lost or left invisible: each of the 30 is in the queue again
// at once (made visible, not waiting out --visibility), or among the lines
// head kept, or named on stderr as removed with its record read but
// perhaps not kept (the one receive the rule may lose, when head was
// still there at the next write). Before the fix brighter died of SIGPIPE
// with nothing on stderr, the first ten deleted (eight in no queue and no
// file) and the next ten invisible for five minutes.
func TestDLQArchive_PipeReaderLeavesEarly(t *testing.T) {
	t.Parallel()
	const n = 30
	dlq, _, conn := dlqtest.CrashQueue(t, n)
	code, kept, errOut := dlqtest.PipeRun(t, dlqtest.HeadLines(t, 2, 30*time.Second), append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", "-"}, conn...)...)
	if code != cmdutil.ExitBrokenPipe || !strings.Contains(errOut, "broken pipe") || !strings.Contains(errOut, shared.LogDLQStdoutGone) || strings.Contains(errOut, "goroutine ") {
		t.Fatalf("archive | head -n 2: exit %d, want %d, the broken pipe named on stderr and its Warning logged:\n%s", code, cmdutil.ExitBrokenPipe, errOut)
	}
	unconfirmed := map[string]bool{}
	if m := regexp.MustCompile(`may not have kept them all: (.*)`).FindStringSubmatch(errOut); m != nil {
		for _, id := range strings.Fields(m[1]) {
			unconfirmed[id] = true
		}
	}
	if len(unconfirmed) > 10 {
		t.Errorf("%d messages named as read and perhaps not kept, want at most one receive's (10):\n%s", len(unconfirmed), errOut)
	}
	read := dlqtest.CrashIDs(t, kept)
	left := dlqtest.CrashDestIDs(t, dlq, conn)
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		if left[id] == 0 && read[id] == 0 && !unconfirmed[id] {
			t.Errorf("%s is in no queue, not among the lines head kept, and not named on stderr", id)
		}
	}
	// The messages written to the pipe and not removed are reported as
	// left, once at Warn, not as failures: the summary says failed 0.
	if strings.Contains(errOut, inspect.LogArchiveWriteFailed) || !strings.Contains(errOut, inspect.LogArchiveReaderLeft) {
		t.Errorf("stderr logs the messages head did not read as failures (%q) or not as left (%q):\n%s", inspect.LogArchiveWriteFailed, inspect.LogArchiveReaderLeft, errOut)
	}
	m := regexp.MustCompile(`failed 0, left (\d+) \(the reader went away`).FindStringSubmatch(errOut)
	if m == nil {
		t.Errorf("the summary does not say failed 0 and how many were left:\n%s", errOut)
	} else if n, _ := strconv.Atoi(m[1]); n < 1 || n > len(left) {
		t.Errorf("summary says %s left, want 1 to the %d visible in the queue", m[1], len(left))
	}
	t.Logf("head kept %d, %d named unconfirmed, %d visible in the queue; stderr:\n%s", len(read), len(unconfirmed), len(left), dlqtest.LastLines(errOut, 3))
}

// TestDLQArchive_PipeReaderLeavesEarlyNamesWhatWasRemovedLast: `dlq
// archive --all --file - | head -n 15` over 30 messages (fauxqs): head
// reads the first receive's ten records, then five of the second's, and
// exits. A receive removed once its records were read and the reader was
// seen still there is named in full in the error as read and perhaps not
// kept, whatever way the stop came (the write's EPIPE, or the
// broken-pipe watch that stops the run as an interrupt does), and says how
// many were archived; exit 141.
func TestDLQArchive_PipeReaderLeavesEarlyNamesWhatWasRemovedLast(t *testing.T) {
	t.Parallel()
	dlq, _, conn := dlqtest.CrashQueue(t, 30)
	code, _, errOut := dlqtest.PipeRun(t, dlqtest.HeadLines(t, 15, 30*time.Second), append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", "-"}, conn...)...)
	if code != cmdutil.ExitBrokenPipe {
		t.Fatalf("archive | head -n 15: exit %d, want %d:\n%s", code, cmdutil.ExitBrokenPipe, errOut)
	}
	m := regexp.MustCompile(`archived (\d+), skipped`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no summary line:\n%s", errOut)
	}
	archived, _ := strconv.Atoi(m[1])
	named := 0
	if u := regexp.MustCompile(`may not have kept them all: (.*)`).FindStringSubmatch(errOut); u != nil {
		named = len(strings.Fields(u[1]))
	}
	// When brighter stops before its next write (the reader left at once),
	// nothing was removed and nothing is named; otherwise the receive
	// removed last is named in full.
	if archived > 10 || named != archived {
		t.Errorf("archived %d, %d named as read and perhaps not kept; want every message of the receive removed last (at most 10) named:\n%s", archived, named, errOut)
	}
}

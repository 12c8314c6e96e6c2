package peek

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQPeek_PipeReaderLeavesEarly: against fauxqs, `dlq peek -o json |
// head -c 10` over 20 messages of 9 KB (a receive's records overflow the
// pipe, so brighter is still writing when the reader leaves): the write
// fails with EPIPE instead of SIGPIPE killing brighter; it stops as at an
// interrupt, says so on stderr, exits 141, and every message it read is
// visible again at once. Before, it died of SIGPIPE silently, leaving what
// it had received invisible for --visibility (5 minutes).
func TestDLQPeek_PipeReaderLeavesEarly(t *testing.T) {
	t.Parallel()
	const n = 20
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "pp", "dlq")
	dlq := "dlq-" + run
	big := []byte(`"` + strings.Repeat("x", 9000) + `"`)
	for i := range n {
		m := message.New(fmt.Sprintf("c%d", i), "orders", message.MTCommand, big)
		if err := p.Send(ctx, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	headC10 := func(r interface{ Read([]byte) (int, error) }) []byte {
		buf := make([]byte, 10)
		k, _ := r.Read(buf)
		return buf[:k]
	}
	code, kept, errOut := dlqtest.PipeRun(t, func(r *os.File) []byte { return headC10(r) }, append([]string{"dlq", "peek", "sqs://" + dlq, "-o", "json"}, conn...)...)
	if code != cmdutil.ExitBrokenPipe || !strings.Contains(errOut, shared.LogDLQStdoutGone) || !strings.Contains(errOut, "made visible again") ||
		!strings.Contains(errOut, "broken pipe") || strings.Contains(errOut, "goroutine ") {
		t.Fatalf("peek -o json | head -c 10: exit %d, want %d, saying the reader went away and what was read was released:\n%s", code, cmdutil.ExitBrokenPipe, errOut)
	}
	if !strings.HasPrefix(string(kept), `{"id":`) {
		t.Errorf("head -c 10 kept %q, want the start of a record", kept)
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != n {
		t.Errorf("right after the peek %d of %d messages are visible, want all:\n%v", len(left), n, left)
	}
}

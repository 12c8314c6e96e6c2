package replay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQReplay_LimitPicksTheSameWithAndWithoutDryRun: --limit 1 picks the
// message rejected first, whatever order the queue hands them out in, so
// the dry run names the message the real run then replays (fauxqs; the
// oldest failure is sent last).
func TestDLQReplay_LimitPicksTheSameWithAndWithoutDryRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "lp", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	now := time.Now()
	for i, id := range []string{"new", "mid", "old"} {
		m := message.New(id+"-"+run, dest, message.MTCommand, []byte(`{}`))
		at := now.Add(-time.Duration(i+1) * time.Hour)
		if err := p.Send(ctx, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, at)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	replay := append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--limit", "1"}, conn...)
	code, out, errOut := cmdtest.BrighterExit(t, dir, append(replay, "--dry-run")...)
	if code != cmdutil.ExitOK || !strings.Contains(out, "would replay old-"+run+" -> "+dest) || strings.Count(out, "would replay ") != 2 {
		t.Fatalf("--limit 1 --dry-run: exit %d, want old-%s alone\nstdout:\n%s\nstderr:\n%s", code, run, out, errOut)
	}
	code, out, errOut = cmdtest.BrighterExit(t, dir, append(replay, "--yes")...)
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed old-"+run+" -> "+dest) || !strings.Contains(out, "replayed 1,") {
		t.Fatalf("--limit 1: exit %d, want old-%s replayed, as the dry run said\nstdout:\n%s\nstderr:\n%s", code, run, out, errOut)
	}
}

package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQ_NoMetadataSaidAlikeAndReplayedToItsRedriveSource: a message in an
// SQS dead-letter queue without rejection metadata, naming no topic but
// that queue (sent there by hand; a foreign message moved by the queue's
// redrive policy looks the same), is described alike by every command and
// replayed where it came from when that is known. Read as the redrive
// target of the one subscription whose redrivePolicy names the queue, peek
// shows that subscription's queue as its ORIGINAL TOPIC and
// "NativeRedrive: moved by broker redrive", and replay without --to puts
// it there; read by URL with no subscriptions file (and fauxqs, which has
// no ListDeadLetterSourceQueues), peek shows "-" (never the queue itself)
// and "NativeRedrive: no rejection metadata", stats groups it under
// NativeRedrive, and replay fails it saying to give --to (fauxqs).
func TestDLQ_NoMetadataSaidAlikeAndReplayedToItsRedriveSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "nm", "orders", "redrive")
	orders, redrive := "orders-"+run, "redrive-"+run
	id := "hand-" + run
	if err := p.Send(ctx, message.New(id, redrive, message.MTEvent, []byte(`{}`))); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := dlqtest.RedriveSubscriptions(t, conn, orders, redrive, false)
	row := func(args ...string) []string {
		t.Helper()
		code, out, errOut := cmdtest.BrighterExit(t, dir, append(append([]string{"dlq", "peek"}, args...), "--wait", "1s")...)
		if code != cmdutil.ExitOK {
			t.Fatalf("peek %v: exit %d\n%s%s", args, code, out, errOut)
		}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 3 && f[0] == id {
				return f
			}
		}
		t.Fatalf("peek %v shows no row for %s:\n%s", args, id, out)
		return nil
	}
	byURL := append([]string{"sqs://" + redrive}, conn...)
	if f := row(byURL...); f[1] != "-" || f[2] != "NativeRedrive:" || !strings.Contains(strings.Join(f, " "), "NativeRedrive: no rejection metadata") {
		t.Errorf("peek by URL shows %q, want ORIGINAL TOPIC - and NativeRedrive: no rejection metadata", f)
	}
	if f := row("orders", "--native", "-c", file); f[1] != orders || !strings.Contains(strings.Join(f, " "), "NativeRedrive: moved by broker redrive") {
		t.Errorf("peek of the redrive target shows %q, want ORIGINAL TOPIC %s and NativeRedrive: moved by broker redrive", f, orders)
	}
	if code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "stats", "--reason", "NativeRedrive", "-o", "json", "--wait", "1s"}, byURL...)...); code != cmdutil.ExitOK || !strings.Contains(out, `"NativeRedrive": 1`) {
		t.Errorf("stats --reason NativeRedrive: exit %d, want the message counted under NativeRedrive\n%s%s", code, out, errOut)
	}
	code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "replay", "--dry-run", "--wait", "1s"}, byURL...)...)
	if code != cmdutil.ExitFailure || !strings.Contains(out+errOut, "carries no rejection metadata") || !strings.Contains(out+errOut, "give --to") {
		t.Errorf("replay by URL of a message with no known source: exit %d, want %d saying to give --to\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitFailure, out, errOut)
	}
	code, out, errOut = cmdtest.BrighterExit(t, dir, "dlq", "replay", "orders", "--native", "-c", file, "--yes", "--wait", "1s")
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed "+id+" -> "+orders) {
		t.Fatalf("replay of the redrive target: exit %d, want %s replayed to %s\nstdout:\n%s\nstderr:\n%s", code, id, orders, out, errOut)
	}
	if ids := cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "sqs://" + orders, "-o", "json"}, conn...)...); len(ids) != 1 || ids[0] != id {
		t.Errorf("after the replay %s holds %v, want %s", orders, ids, id)
	}
}

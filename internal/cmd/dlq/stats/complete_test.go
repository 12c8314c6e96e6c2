package stats

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQ_GroupIDCompletion: --group-id completes with the failure
// groups of the destination the command line names (read as stats reads
// it: every message visible again afterwards), described by count and
// reason, filtered by the prefix typed; restore's with those of its
// archive file; an unreachable destination completes nothing, quickly.
func TestDLQ_GroupIDCompletion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "gc", "dlq")
	dlq := "dlq-" + run
	rejected := func(id, why string) *message.Message {
		return message.Stamp(message.New(id, "orders", message.MTCommand, []byte(`{}`)), dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: why}, time.Now())
	}
	ms := []*message.Message{rejected("t1", "timeout after 30s"), rejected("t2", "timeout after 31s"), rejected("v1", "validation failed")}
	var archive []byte
	for _, m := range ms {
		if err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
		line, err := message.MarshalRecordJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		archive = append(append(archive, line...), '\n')
	}
	timeouts, validation := inspect.GroupOf(ms[0]).ID(), inspect.GroupOf(ms[2]).ID()
	if timeouts == validation || inspect.GroupOf(ms[1]).ID() != timeouts {
		t.Fatalf("group ids: %s %s %s", timeouts, inspect.GroupOf(ms[1]).ID(), validation)
	}
	dir := t.TempDir()
	complete := func(args ...string) string {
		t.Helper()
		code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"__complete"}, args...)...)
		if code != cmdutil.ExitOK {
			t.Fatalf("__complete %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	out := complete(append(append([]string{"dlq", "peek", "sqs://" + dlq}, conn...), "--group-id", "")...)
	for _, want := range []string{timeouts + "\t2 DeliveryError orders: timeout after", validation + "\t1 DeliveryError orders: validation failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("peek --group-id completion lacks %q:\n%s", want, out)
		}
	}
	// The prefix typed narrows it; replay completes the same way.
	out = complete(append(append([]string{"dlq", "replay", "sqs://" + dlq}, conn...), "--group-id", validation[:4])...)
	if !strings.Contains(out, validation+"\t") || strings.Contains(out, timeouts) && !strings.HasPrefix(timeouts, validation[:4]) {
		t.Errorf("completion of the prefix %s:\n%s", validation[:4], out)
	}
	// Nothing was removed or left held.
	if code, _, errOut := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "stats", "sqs://" + dlq}, conn...)...); code != cmdutil.ExitOK || !strings.Contains(errOut, "3 counted, 3 read") {
		t.Errorf("stats after the completions: exit %d\n%s", code, errOut)
	}
	// restore completes from its archive file.
	file := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(file, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	out = complete("dlq", "restore", file, "-s", "sqs://nowhere-"+run, "--group-id", "")
	if !strings.Contains(out, timeouts+"\t2 ") || !strings.Contains(out, validation+"\t1 ") {
		t.Errorf("restore --group-id completion:\n%s", out)
	}
	// An unreachable broker: nothing, within the deadline.
	start := time.Now()
	out = complete("dlq", "peek", "sqs://"+dlq, "--endpoint", "http://127.0.0.1:1", "--region", sqstest.Region, "--group-id", "")
	if strings.Contains(out, timeouts) || time.Since(start) > 30*time.Second {
		t.Errorf("completion against an unreachable endpoint took %s:\n%s", time.Since(start), out)
	}
}

package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQReplay_DryRunRefusesMissingTo: a dry run to a --to queue that does
// not exist is refused before anything is read, naming --to, with the exit
// code of the real run (1), which fails every message there; it prints no
// "would replay". A dry run to a queue that exists still says what it would
// replay, and the dead letters stay.
func TestDLQReplay_DryRunRefusesMissingTo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "drto", "dlq", "dest")
	dlq, dest, missing := "dlq-"+run, "dest-"+run, "nosuch-"+run
	for _, id := range []string{"a-" + run, "b-" + run} {
		if err := p.Send(ctx, dlqtest.Stamped(id, dest, dlq)); err != nil {
			t.Fatal(err)
		}
	}
	replay := func(args ...string) (int, string, string) {
		return dlqtest.DLQRun(t, append(append([]string{"replay", "sqs://" + dlq}, args...), conn...)...)
	}
	code, out, errOut := replay("--to", missing, "--dry-run")
	if code != cmdutil.ExitFailure || !strings.Contains(errOut, `--to "`+missing+`"`) || !strings.Contains(errOut, "every message would fail") || strings.Contains(out, "would replay") {
		t.Errorf("--dry-run --to a missing queue: exit %d, want %d naming --to and no would-replay\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitFailure, out, errOut)
	}
	code, out, errOut = replay("--to", dest, "--dry-run")
	if code != cmdutil.ExitOK || !strings.Contains(out, "would replay 2") {
		t.Errorf("--dry-run --to an existing queue: exit %d, want 0 and would replay 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// The real run to the missing queue exits as the dry run did.
	code, out, errOut = replay("--to", missing, "--yes", "--journal", "")
	if code != cmdutil.ExitFailure || !strings.Contains(out, "failed 2") {
		t.Errorf("the real run --to a missing queue: exit %d, want %d and failed 2\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitFailure, out, errOut)
	}
}

// TestDLQReplay_DryRunRefusesMissingTo_PubSub: on Pub/Sub the dry run looks
// --to up with GetTopic: a topic that does not exist is refused (exit 1,
// naming --to) before anything is pulled; an existing topic is a would-replay.
func TestDLQReplay_DryRunRefusesMissingTo_PubSub(t *testing.T) {
	t.Parallel()
	_, addr, subName := dlqtest.PubSubShared(t)
	src := "pubsub://" + subName("shared-dlq")
	code, out, errOut := dlqtest.DLQRun(t, "replay", src, "--endpoint", addr, "--to", "nosuch-topic", "--dry-run")
	if code != cmdutil.ExitFailure || !strings.Contains(errOut, `--to "nosuch-topic"`) || !strings.Contains(errOut, "every message would fail") || strings.Contains(out, "would replay") {
		t.Errorf("--dry-run --to a missing topic: exit %d, want %d naming --to and no would-replay\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitFailure, out, errOut)
	}
	code, out, errOut = dlqtest.DLQRun(t, "replay", src, "--endpoint", addr, "--to", "placed", "--dry-run")
	if code != cmdutil.ExitOK || !strings.Contains(out, "would replay") {
		t.Errorf("--dry-run --to an existing topic: exit %d, want 0 and a would-replay\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

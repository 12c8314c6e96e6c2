package replay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQReplay_AllowList: without --to, dlq replay publishes only
// to a destination the subscriptions file knows for the dead-letter
// destination read; a forged originalTopic (an SQS bag entry, a Pub/Sub
// Topic attribute, a RocketMQ property) is refused per message (listed,
// counted, left in place), --dry-run shows each decision, every known
// destination still works, and --allow-any-destination replays the forged
// copy; on every transport against its emulator.
func TestDLQReplay_AllowList(t *testing.T) {
	t.Parallel() // each case on destinations named after run; `brighter` processes, waits on peeks
	run := fmt.Sprintf("al%d", time.Now().UnixNano()%1e9)
	ctx := context.Background()
	cases := []dlqtest.AllowCase{dlqtest.SQSAllowCase(t, ctx, run), dlqtest.GCPAllowCase(t, ctx, run), dlqtest.RocketMQAllowCase(t, ctx, run)}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			dir, file := c.Prepare(t)
			replay := append(append([]string{"dlq", "replay", "orders", "--config", file}, c.Extra()...), c.ReplayFlags()...)

			code, out, errOut := cmdtest.BrighterExit(t, dir, append(replay, "--dry-run")...)
			for _, want := range []string{
				"would replay known1-" + run + " -> " + c.Orders + "\n",
				"would replay known2-" + run + " -> " + c.Audit + "\n",
				"would refuse forged-" + run + " -> " + c.Victim + ": not a destination the subscriptions file knows",
				"would replay 2, skipped 0, failed 0, refused 1\n",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("dry run: stdout lacks %q (exit %d)\nstdout:\n%s\nstderr:\n%s", want, code, out, errOut)
				}
			}

			code, out, errOut = cmdtest.BrighterExit(t, dir, append(replay, "--yes")...)
			if code != cmdutil.ExitFailure || !strings.Contains(errOut, "1 message refused") {
				t.Errorf("replay: exit %d, want %d and the refusal\nstderr:\n%s", code, cmdutil.ExitFailure, errOut)
			}
			for _, want := range []string{
				"replayed known1-" + run + " -> " + c.Orders + "\n",
				"replayed known2-" + run + " -> " + c.Audit + "\n",
				"refused forged-" + run + " -> " + c.Victim,
				"replayed 2, skipped 0, failed 0, refused 1\n",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("replay: stdout lacks %q\nstdout:\n%s\nstderr:\n%s", want, out, errOut)
				}
			}
			if ids := cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "orders", "--config", file, "--output", "json"}, c.Extra()...)...); !slices.Equal(ids, []string{"forged-" + run}) {
				t.Errorf("after the replay the dead-letter destination holds %v, want only the refused forged-%s", ids, run)
			}
			if ids := cmdtest.PeekIDs(t, dir, c.PeekVictim...); slices.Contains(ids, "forged-"+run) {
				t.Errorf("the refused copy reached the victim: %v", ids)
			}
			if ids := cmdtest.PeekIDs(t, dir, c.PeekAudit...); !slices.Contains(ids, "known2-"+run) {
				t.Errorf("known2 did not reach audit: %v", ids)
			}

			code, out, errOut = cmdtest.BrighterExit(t, dir, append(replay, "--allow-any-destination", "--yes")...)
			if code != cmdutil.ExitOK || !strings.Contains(out, "replayed forged-"+run+" -> "+c.Victim+"\n") {
				t.Errorf("replay --allow-any-destination: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if ids := cmdtest.PeekIDs(t, dir, c.PeekVictim...); !slices.Contains(ids, "forged-"+run) {
				t.Errorf("--allow-any-destination did not replay the forged copy to the victim: %v", ids)
			}
		})
	}
}

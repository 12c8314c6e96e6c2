package stats

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/inspect"
)

// TestDLQ_GroupIDCompletion_PubSubRocketMQ: --group-id completes
// with the failure groups of the destination the command line names on
// Google's Pub/Sub emulator and the RocketMQ test broker as on SQS
// (TestDLQ_GroupIDCompletion): every group dlq stats shows, described
// by count, reason, original topic and normalised rejection message, for
// the subscription given as the argument or with -s; the prefix typed
// narrows it; and nothing is removed or left held by the reads.
func TestDLQ_GroupIDCompletion_PubSubRocketMQ(t *testing.T) {
	t.Parallel() // each case on its own broker and destinations named after run
	run := fmt.Sprintf("gc%d", time.Now().UnixNano()%1e9)
	ctx := context.Background()
	for _, c := range []dlqtest.AllowCase{dlqtest.GCPAllowCase(t, ctx, run), dlqtest.RocketMQAllowCase(t, ctx, run)} {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			dir, file := c.Prepare(t)
			groups := statsGroups(t, dir, "orders", "-c", file)
			if len(groups) != 3 {
				t.Fatalf("stats: %d failure groups, want 3 (known1, known2, forged each its own): %+v", len(groups), groups)
			}
			// known1's group, computed here, is one of them.
			known1 := inspect.GroupOf(dlqtest.Stamped("known1-"+run, c.Orders, "dlq")).ID()
			if _, ok := groups[known1]; !ok {
				t.Fatalf("stats lacks known1's group %s: %+v", known1, groups)
			}
			complete := func(args ...string) string {
				t.Helper()
				code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"__complete", "dlq"}, args...)...)
				if code != cmdutil.ExitOK {
					t.Fatalf("__complete dlq %v: exit %d\n%s%s", args, code, out, errOut)
				}
				return out
			}
			for _, args := range [][]string{
				{"peek", "orders", "-c", file, "--group-id", ""},
				{"peek", "-c", file, "-s", "orders", "--group-id", ""},
			} {
				out := complete(args...)
				for id, g := range groups {
					want := fmt.Sprintf("%s\t%d %s %s\n", id, g.Count, g.Reason, g.OriginalTopic)
					if g.Message != "" { // else (a native redrive) no dangling ": "
						want = fmt.Sprintf("%s\t%d %s %s: %s\n", id, g.Count, g.Reason, g.OriginalTopic, g.Message)
					}
					if !strings.Contains(out, want) {
						t.Errorf("%v: completion lacks %q:\n%s", args, want, out)
					}
				}
			}
			// The prefix typed narrows it; replay completes the same way.
			prefix := known1[:4]
			out := complete("replay", "orders", "-c", file, "--group-id", prefix)
			if !strings.Contains(out, known1+"\t") {
				t.Errorf("completion of the prefix %s lacks %s:\n%s", prefix, known1, out)
			}
			for id := range groups {
				if !strings.HasPrefix(id, prefix) && strings.Contains(out, id) {
					t.Errorf("completion of the prefix %s offers %s:\n%s", prefix, id, out)
				}
			}
			// Nothing was removed or left held: stats reads all three again.
			if after := statsGroups(t, dir, "orders", "-c", file); len(after) != 3 {
				t.Errorf("stats after the completions: %d groups, want 3: %+v", len(after), after)
			}
		})
	}
}

// statsGroup is one failure group of `dlq stats -o json`.
type statsGroup struct {
	OriginalTopic string `json:"originalTopic"`
	Reason        string `json:"reason"`
	Message       string `json:"message"`
	Count         int    `json:"count"`
}

// statsGroups runs `dlq stats ARGS -o json` in dir and returns its failure
// groups by id.
func statsGroups(t *testing.T, dir string, args ...string) map[string]statsGroup {
	t.Helper()
	code, out, errOut := cmdtest.BrighterExit(t, dir, append(append([]string{"dlq", "stats"}, args...), "-o", "json")...)
	if code != cmdutil.ExitOK {
		t.Fatalf("dlq stats %v: exit %d\n%s%s", args, code, out, errOut)
	}
	var s struct {
		Groups []struct {
			ID string `json:"id"`
			statsGroup
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("dlq stats -o json: %v\n%s", err, out)
	}
	groups := map[string]statsGroup{}
	for _, g := range s.Groups {
		groups[g.ID] = g.statsGroup
	}
	return groups
}

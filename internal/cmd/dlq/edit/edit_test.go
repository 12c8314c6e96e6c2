package edit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQEdit_EveryTransport: dlq edit on SQS (fauxqs), Pub/Sub
// (Google's emulator) and RocketMQ (the test broker): an invalid JSON body
// is refused with exit 2 and nothing changes; a dry run shows the edited
// message and its destination; an edit (EDITOR a script, plus --set) is
// replayed to the originalTopic the subscriptions file knows, with
// editedAt, originalBodySha256 and the bag entry, and the original leaves
// the dead-letter destination; a forged originalTopic is refused by
// replay's allow-list (exit 1) and the message stays.
func TestDLQEdit_EveryTransport(t *testing.T) {
	run := fmt.Sprintf("ed%d", time.Now().UnixNano()%1e9)
	ctx := context.Background()
	tools := t.TempDir()
	fix := filepath.Join(tools, "fix.sh")
	broken := filepath.Join(tools, "broken.sh")
	for p, script := range map[string]string{
		fix:    "#!/bin/sh\nprintf '{\"edited\":true}' > \"$1\"\n",
		broken: "#!/bin/sh\nprintf '{\"edited\":' > \"$1\"\n",
	} {
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []dlqtest.AllowCase{dlqtest.SQSAllowCase(t, ctx, run), dlqtest.GCPAllowCase(t, ctx, run), dlqtest.RocketMQAllowCase(t, ctx, run)}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			dir, file := c.Prepare(t)
			edit := func(id string, more ...string) []string {
				return append(append([]string{"dlq", "edit", id + "-" + run, "orders", "--config", file}, c.ReplayFlags()...), more...)
			}
			peekDLQ := []string{"dlq", "peek", "orders", "--config", file, "--output", "json"}

			t.Setenv("EDITOR", broken)
			code, _, errOut := cmdtest.BrighterExit(t, dir, edit("known2")...)
			if code != cmdutil.ExitUsage || !strings.Contains(errOut, "the body is not valid JSON") || !strings.Contains(errOut, "nothing was sent") {
				t.Errorf("invalid JSON: exit %d, want %d and the reason\nstderr:\n%s", code, cmdutil.ExitUsage, errOut)
			}

			t.Setenv("EDITOR", fix)
			code, out, errOut := cmdtest.BrighterExit(t, dir, edit("known2", "--dry-run")...)
			if code != cmdutil.ExitOK || !strings.Contains(out, "would send:") || !strings.Contains(out, `"body": "{\"edited\":true}"`) ||
				!strings.Contains(out, "would replay known2-"+run+" -> "+c.Audit+"\n") {
				t.Errorf("dry run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if ids := cmdtest.PeekIDs(t, dir, peekDLQ...); len(ids) != 3 {
				t.Errorf("after the refusal and the dry run the dead-letter destination holds %v, want all three", ids)
			}

			code, out, errOut = cmdtest.BrighterExit(t, dir, edit("known2", "--set", "fixedBy=ops")...)
			if code != cmdutil.ExitOK || !strings.Contains(out, "replayed known2-"+run+" -> "+c.Audit+"\n") {
				t.Fatalf("edit: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			_, audit, _ := cmdtest.BrighterExit(t, dir, c.PeekAudit...)
			line := ""
			for l := range strings.SplitSeq(audit, "\n") {
				if strings.Contains(l, `"id":"known2-`+run+`"`) {
					line = l
				}
			}
			for _, want := range []*regexp.Regexp{
				regexp.MustCompile(`"originalBodySha256":"[0-9a-f]{64}"`),
				regexp.MustCompile(`"editedAt":"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ"`),
				regexp.MustCompile(`"fixedBy":"ops"`),
				regexp.MustCompile(`"body":"\{\\"edited\\":true\}"`),
			} {
				if !want.MatchString(line) {
					t.Errorf("the edited copy at %s lacks %s:\n%s", c.Audit, want, audit)
				}
			}
			if strings.Contains(line, `"rejectionReason"`) {
				t.Errorf("the edited copy kept the rejection metadata: %s", line)
			}
			if ids := cmdtest.PeekIDs(t, dir, peekDLQ...); slices.Contains(ids, "known2-"+run) {
				t.Errorf("the original of an accepted edit is still in the dead-letter destination: %v", ids)
			}

			code, out, errOut = cmdtest.BrighterExit(t, dir, edit("forged")...)
			if code != cmdutil.ExitFailure || !strings.Contains(out, "refused forged-"+run+" -> "+c.Victim) {
				t.Errorf("forged: exit %d, want %d and the refusal\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitFailure, out, errOut)
			}
			if ids := cmdtest.PeekIDs(t, dir, peekDLQ...); !slices.Contains(ids, "forged-"+run) {
				t.Errorf("the refused message left the dead-letter destination: %v", ids)
			}
			if ids := cmdtest.PeekIDs(t, dir, c.PeekVictim...); slices.Contains(ids, "forged-"+run) {
				t.Errorf("the refused edit reached the victim: %v", ids)
			}
		})
	}
}

package triage

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQTriage_TmuxPurge: the console's x purges what is under the
// cursor as dlq purge does, after a confirmation naming the message and
// saying no copy is kept: n declines (nothing removed), y removes it for
// good; the other messages stay and no archive file is written (tmux,
// 80x24, fauxqs).
func TestDLQTriage_TmuxPurge(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	f := newTriageSQS(t)
	emu := f.emu
	run := fmt.Sprintf("px%d", time.Now().UnixNano()%1e9)
	dlq := "triage-dlq-" + run
	f.queues(t, dlq)
	f.send(t, triageMessages(run, "orders", dlq)...)
	dir := t.TempDir()
	archive := filepath.Join(dir, "archive.jsonl")
	exitFile := filepath.Join(dir, "exit")
	conn := []string{"--endpoint", emu.Endpoint, "--region", sqstest.Region}
	command := fmt.Sprintf("%s dlq triage sqs://%s --archive-file %s --visibility 30s %s; echo $? > %s",
		cmdtest.Bin(t), dlq, archive, strings.Join(conn, " "), exitFile)
	s := startTriage(t, run, command, []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1"})
	s.Await("both groups", func(sc string) bool {
		return strings.Contains(sc, "timeout calling payments") && strings.Contains(sc, "order has no customer")
	})
	// open the timeout group (two messages, listed first)
	s.Keys(false, "Enter")
	s.Await("the group's messages", func(sc string) bool {
		return strings.Contains(sc, "a1-"+run) && strings.Contains(sc, "a2-"+run)
	})
	prompt := regexp.MustCompile(`Purge 1 message \(of .*: (a[12]-` + run + `)\) from sqs://` + dlq + `: deleted for good, no copy kept\? \(y/n\)`)
	asked := func() string {
		var id string
		s.Await("the purge prompt naming one message", func(sc string) bool {
			m := prompt.FindStringSubmatch(strings.Join(strings.Fields(sc), " "))
			if m != nil {
				id = m[1]
			}
			return m != nil
		})
		return id
	}
	// n declines: nothing is removed
	s.Keys(true, "x")
	declined := asked()
	s.Keys(true, "n")
	s.Await("the prompt gone", func(sc string) bool { return !strings.Contains(sc, "Purge 1 message") })
	// y purges
	s.Keys(true, "x")
	purged := asked()
	if purged != declined {
		t.Fatalf("the second x asks about %s, the first about %s: the cursor moved", purged, declined)
	}
	s.Keys(true, "y")
	s.AwaitText("purged 1, failed 0")
	s.Await(purged+" gone from the list", func(sc string) bool { return !strings.Contains(sc, purged) })
	s.Keys(true, "q")
	s.AwaitExit(exitFile)

	ids := dlqtest.CrashIDs(t, []byte(cmdtest.Brighter(t, t.TempDir(), append([]string{"dlq", "peek", "sqs://" + dlq, "-o", "json"}, conn...)...)))
	other := "a1-" + run
	if purged == other {
		other = "a2-" + run
	}
	if len(ids) != 2 || ids[other] != 1 || ids["b1-"+run] != 1 {
		t.Errorf("the DLQ holds %v after purging %s, want %s and b1", ids, purged, other)
	}
	if _, err := os.Stat(archive); !os.IsNotExist(err) {
		t.Errorf("a purge wrote the archive file %s (%v): it keeps no copy", archive, err)
	}
}

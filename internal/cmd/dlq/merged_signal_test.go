package dlq_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQ_TimeoutsDoubleSignal_IsOneStop starts `brighter dlq peek`,
// `stats` and `replay --rate` as processes on an SQS queue of fauxqs and,
// once they hold messages, sends SIGINT twice a few milliseconds apart, as
// timeout(1) does (to the command, then to its process group) and as a
// terminal's ^C reaching every process of the group does: that is one
// stop, not a second signal. Each exits 130 after printing what it read
// and saying it was interrupted, never logs "second signal", and every
// message it held is visible again at once, not after its 5-minute
// --visibility.
func TestDLQ_TimeoutsDoubleSignal_IsOneStop(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	const n = 12
	attribute := func(queue string, name types.QueueAttributeName) int {
		v, err := dlqtest.QueueCount(c, queue, name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, verb := range [][]string{
		{"peek"},
		{"stats"},
		{"replay", "--to", "TARGET", "--yes", "--rate", "2", "--journal", "JOURNAL"},
	} {
		t.Run(verb[0], func(t *testing.T) {
			queue, target, conn := dlqtest.CrashQueue(t, n)
			args := []string{"dlq"}
			for _, a := range verb {
				switch a {
				case "TARGET":
					a = target
				case "JOURNAL":
					a = filepath.Join(t.TempDir(), "replay.journal")
				}
				args = append(args, a)
			}
			args = append(append(append(args, "sqs://"+queue), conn...), "--wait", "2s", "--visibility", "5m")
			proc := cmdtest.StartBrighter(t, t.TempDir(), nil, args...)
			proc.Await(t, "holding a message", func() bool {
				return attribute(queue, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible) > 0
			})
			proc.Signal(syscall.SIGINT)
			time.Sleep(3 * time.Millisecond)
			proc.Signal(syscall.SIGINT)
			code, _ := proc.Wait(t)
			logs := proc.Stderr.String()
			if code != 130 {
				t.Fatalf("exit %d, want 130; stderr:\n%s", code, logs)
			}
			if strings.Contains(logs, "second signal") {
				t.Errorf("timeout(1)'s repeated signal was taken as a second signal; stderr:\n%s", logs)
			}
			if !strings.Contains(logs, "interrupted; every message read was made visible again") {
				t.Errorf("no final line saying the run was interrupted; stderr:\n%s", logs)
			}
			if strings.TrimSpace(proc.Stdout.String()) == "" {
				t.Errorf("nothing printed of what was read; stderr:\n%s", logs)
			}
			held := attribute(queue, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)
			if held != 0 {
				t.Errorf("%d messages still invisible after the run, want every held one released", held)
			}
		})
	}
}

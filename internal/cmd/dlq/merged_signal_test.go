package dlq_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/message"
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
		u, err := c.SQS.GetQueueUrl(context.Background(), &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.SQS.GetQueueAttributes(context.Background(), &awssqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl, AttributeNames: []types.QueueAttributeName{name}})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := strconv.Atoi(out.Attributes[string(name)])
		return v
	}
	for _, verb := range [][]string{
		{"peek"},
		{"stats"},
		{"replay", "--to", "TARGET", "--yes", "--rate", "2", "--journal", "JOURNAL"},
	} {
		t.Run(verb[0], func(t *testing.T) {
			queue := fmt.Sprintf("merged-sig-%s-%d", verb[0], time.Now().UnixNano()%1e9)
			target := queue + "-target"
			for _, q := range []string{queue, target} {
				if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q}).EnsureChannels(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
			for i := range n {
				m := message.New(fmt.Sprintf("m%d", i), queue, message.MTCommand, []byte(`{}`))
				routed := message.Stamp(m, queue, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, time.Now())
				if err := p.Send(context.Background(), routed); err != nil {
					t.Fatal(err)
				}
			}
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
			args = append(args, "sqs://"+queue, "--endpoint", emu.Endpoint, "--region", sqstest.Region, "--wait", "2s", "--visibility", "5m")
			cmd := exec.Command("brighter", args...)
			cmd.Dir = t.TempDir()
			cmd.Env = cmdtest.Env()
			var stdout, stderr cmdtest.LockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			exited, err := cmdtest.StartChild(cmd)
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for attribute(queue, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible) == 0 {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("brighter %v holds no message after 30s; stderr:\n%s", args, stderr.String())
				}
				select {
				case err := <-exited:
					t.Fatalf("brighter %v exited (%v) before it held a message; stderr:\n%s", args, err, stderr.String())
				case <-time.After(20 * time.Millisecond):
				}
			}
			_ = cmd.Process.Signal(syscall.SIGINT)
			time.Sleep(3 * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGINT)
			select {
			case err = <-exited:
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("brighter %v still running a minute after its signals; stderr:\n%s", args, stderr.String())
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			logs := stderr.String()
			if code != 130 {
				t.Fatalf("exit %d, want 130; stderr:\n%s", code, logs)
			}
			if strings.Contains(logs, "second signal") {
				t.Errorf("timeout(1)'s repeated signal was taken as a second signal; stderr:\n%s", logs)
			}
			if !strings.Contains(logs, "interrupted; every message read was made visible again") {
				t.Errorf("no final line saying the run was interrupted; stderr:\n%s", logs)
			}
			if strings.TrimSpace(stdout.String()) == "" {
				t.Errorf("nothing printed of what was read; stderr:\n%s", logs)
			}
			held := attribute(queue, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)
			if held != 0 {
				t.Errorf("%d messages still invisible after the run, want every held one released", held)
			}
		})
	}
}

package consume_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/polltest"
)

// TestConsumeRefusesRejectionCycle: a file whose two subscriptions
// dead-letter to each other is a configuration error (exit 2) before any
// message moves, with lint's wording naming both subscriptions, also when
// only one of them is selected; a file with the SQS queue named two ways
// (lo.op reading, lo_op dead-letter) likewise (dead-letter-is-source).
func TestConsumeRefusesRejectionCycle(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "onea.jsonl"), []byte(`{"id":"m1","topic":"qa","type":"MT_COMMAND","body":"{}"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"cycle.yaml": `subscriptions:
  - {name: qa, transport: memory, requeueCount: 2, deadLetterRoutingKey: qb, handler: {type: builtin, name: reject}, memory: {seed: onea.jsonl}}
  - {name: qb, transport: memory, requeueCount: 2, deadLetterRoutingKey: qa, handler: {type: builtin, name: reject}}
`,
		"loop.yaml": `connections:
  aws: {region: us-east-1, endpoint: "http://127.0.0.1:1"}
subscriptions:
  - {name: lo, transport: sqs, channelName: lo.op, deadLetterRoutingKey: lo_op, requeueCount: 2, handler: {type: builtin, name: reject}}
`,
	}
	for name, yaml := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"both", []string{"--config", filepath.Join(dir, "cycle.yaml")}, []string{`error rejection-cycle: subscription "qa"`, `error rejection-cycle: subscription "qb"`}},
		{"one selected", []string{"--config", filepath.Join(dir, "cycle.yaml"), "-s", "qb"}, []string{`error rejection-cycle: subscription "qb" is on a rejection cycle of 2 subscriptions: "qb" (deadLetterRoutingKey "qa") -> "qa"`}},
		{"one SQS queue named two ways", []string{"--config", filepath.Join(dir, "loop.yaml")}, []string{`error dead-letter-is-source: subscription "lo": deadLetterRoutingKey "lo_op"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			io, _, errOut := cmdtest.FakeIO("", false)
			code := run(ctx, io, append([]string{"consume"}, c.args...))
			logs := errOut.String()
			if code != cmdutil.ExitUsage {
				t.Fatalf("consume exited %d, want %d; stderr:\n%s", code, cmdutil.ExitUsage, logs)
			}
			for _, w := range append(c.want, "brighter consume does not start a subscription that brighter lint reports as an error") {
				if !strings.Contains(logs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, logs)
				}
			}
			if strings.Contains(logs, `msg="message rejected"`) || strings.Contains(logs, `msg="consume starting"`) {
				t.Fatalf("a pump ran:\n%s", logs)
			}
		})
	}
}

// TestConsumeStopsRejectionCycleAcrossProcesses (fauxqs, both pump
// variants): the cycle lint cannot see, two `brighter consume` processes
// each running one subscription of its own file, qa dead-lettering to qb
// and qb to qa, each queue with a native redrive policy. One `send`
// used to make thousands of publish-and-delete rounds in seconds; now the
// message is routed round once (two "message rejected") and then held on
// qa with one Error (docs/adr/0004 decision 12), and no rejection follows.
func TestConsumeStopsRejectionCycleAcrossProcesses(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	for _, variant := range []string{"reactor", "proactor"} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			stamp := time.Now().UnixNano() % 1e9
			qa, qb := fmt.Sprintf("cyc-a-%s-%d", variant, stamp), fmt.Sprintf("cyc-b-%s-%d", variant, stamp)
			write := func(name, queue, dlq string) string {
				file := filepath.Join(dir, name)
				yaml := fmt.Sprintf(`connections:
  aws: {region: %s, endpoint: %s}
subscriptions:
  - name: %s
    transport: sqs
    channelName: %s
    messagePumpType: %s
    timeOut: 1s
    requeueCount: 2
    deadLetterRoutingKey: %s
    handler: {type: builtin, name: reject}
    sqs: {redrivePolicy: {deadLetterQueue: %s-native, maxReceiveCount: 5}}
`, sqstest.Region, emu.Endpoint, queue, queue, variant, dlq, queue)
				if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
					t.Fatal(err)
				}
				return file
			}
			fa, fb := write("a.yaml", qa, qb), write("b.yaml", qb, qa)
			pa, pb := startConsume(t, dir, fa), startConsume(t, dir, fb)
			id := "poison-" + variant
			cmdtest.Brighter(t, dir, "send", "--config", fa, "--subscription", qa, "--id", id, "--body", "{}")
			logs := func() string { return pa.stderr.String() + pb.stderr.String() }
			waitFor(t, 30*time.Second, "the cycle held", func() bool {
				return strings.Contains(logs(), broker.LogRoutingCycle)
			}, pa, pb)
			rejected := func() int { return strings.Count(logs(), `"msg":"message rejected"`) }
			// qb's process logs its rejection once its routing has returned,
			// which can be after qa's process has already read the copy and
			// held it: wait for both rejections before the quiet window.
			polltest.Until(t, 10*time.Second, "qb's process logged its rejection", func() bool { return rejected() >= 2 })
			polltest.Stays(t, 3*time.Second, "no rejection after the cycle was held", func() bool { return rejected() == 2 })
			if n := strings.Count(pa.stderr.String(), broker.LogRoutingCycle); n != 1 || !strings.Contains(pa.stderr.String(), `"message_id":"`+id+`"`) {
				t.Errorf("qa's process logged the cycle %d times, want once naming %s:\n%s", n, id, pa.stderr.String())
			}
			pa.terminate(t)
			pb.terminate(t)
			for q, want := range map[string]int{qa: 1, qb: 0, qa + "-native": 0, qb + "-native": 0} {
				if n := cycleQueueDepth(t, emu.Endpoint, q); n != want {
					t.Errorf("%s holds %d messages, want %d (the one message, held on qa: never lost, never copied)", q, n, want)
				}
			}
		})
	}
}

// cycleQueueDepth is the number of messages queue holds on the SQS
// emulator at endpoint: visible, in flight and delayed.
func cycleQueueDepth(t *testing.T, endpoint, queue string) int {
	t.Helper()
	c := sqs.NewClientsFromConfig(sqstest.Config(), endpoint).SQS
	ctx := context.Background()
	u, err := c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatalf("GetQueueUrl %s: %v", queue, err)
	}
	out, err := c.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatalf("GetQueueAttributes %s: %v", queue, err)
	}
	n := 0
	for _, a := range []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, types.QueueAttributeNameApproximateNumberOfMessagesDelayed} {
		v, _ := strconv.Atoi(out.Attributes[string(a)])
		n += v
	}
	return n
}

package consume_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestConsumeValidateMissingDeadLetterQueueSaysWhatToDo: consume with
// makeChannels: validate, whose queue exists on SQS (fauxqs) and whose
// dead-letter queue does not, exits 1 naming what is missing and what to
// do: create it (the aws command) or set makeChannels: create.
func TestConsumeValidateMissingDeadLetterQueueSaysWhatToDo(t *testing.T) {
	t.Parallel() // its own queues
	emu := cmdtest.SharedSQS(t)
	queue := fmt.Sprintf("vfix-%d", time.Now().UnixNano()%1e12)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint).SQS
	if _, err := c.CreateQueue(context.Background(), &awssqs.CreateQueueInput{QueueName: aws.String(queue)}); err != nil {
		t.Fatalf("CreateQueue %s: %v", queue, err)
	}
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	listenMust(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`connections:
  aws: {region: %s, endpoint: %s}
subscriptions:
  - name: orders
    transport: sqs
    channelName: %s
    makeChannels: validate
    deadLetterRoutingKey: %s-dlq
    handler: {type: builtin, name: ack}
`, sqstest.Region, emu.Endpoint, queue, queue)), 0o644))
	stderr := &cmdtest.LockedBuffer{}
	code := run(context.Background(), &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: stderr, Getenv: os.LookupEnv},
		[]string{"consume", "--config", cfg})
	got := stderr.String()
	if code != cmdutil.ExitFailure {
		t.Fatalf("consume exited %d, want %d; stderr:\n%s", code, cmdutil.ExitFailure, got)
	}
	for _, want := range []string{queue + "-dlq", "missing SQS/SNS infrastructure; to fix, create what is missing (aws sqs create-queue --queue-name NAME", "or set makeChannels: create on subscription orders, which makes it at start-up"} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
}

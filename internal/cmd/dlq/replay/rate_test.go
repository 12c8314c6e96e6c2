package replay

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// sentTimes receives the n messages of queue (fauxqs) and returns their
// SentTimestamps, sorted.
func sentTimes(t *testing.T, queue string, n int) []time.Time {
	t.Helper()
	ctx := context.Background()
	c := sqs.NewClientsFromConfig(sqstest.Config(), cmdtest.SharedSQS(t).Endpoint)
	url, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	var at []time.Time
	deadline := time.Now().Add(30 * time.Second)
	for len(at) < n {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d messages of %s in 30s", len(at), n, queue)
		}
		got, err := c.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got.Messages {
			ms, err := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64)
			if err != nil {
				t.Fatalf("SentTimestamp of %s: %v", aws.ToString(m.MessageId), err)
			}
			at = append(at, time.UnixMilli(ms))
		}
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	return at
}

// TestDLQReplay_RateSpacesThePublishes: `--rate 4` over seven dead letters
// publishes the first at once and the others a quarter of a second apart,
// each its own publish (the destination's SentTimestamps), not the seven
// together after the limiter let the scan queue them: at least 1.25 s
// (of 1.5 s) from the first publish to the last and no two within 0.1 s
// of each other; the first is published within 1.2 s of the command's
// start (a batch's worth of tokens first would take 1.5 s; it takes
// some 50 ms).
func TestDLQReplay_RateSpacesThePublishes(t *testing.T) {
	t.Parallel()
	const n, perSecond = 7, 4
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "rt", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	for i := range n {
		m := message.New("r"+strconv.Itoa(i)+"-"+run, dest, message.MTCommand, []byte(`{}`))
		if err := p.Send(ctx, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "drill"}, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	code, out, errOut := dlqtest.DLQRun(t, append([]string{"replay", "sqs://" + dlq, "--to", dest, "--rate", strconv.Itoa(perSecond), "--yes", "-o", "json"}, conn...)...)
	if code != cmdutil.ExitOK || strings.Count(out, `"outcome":"replayed"`) != n || !strings.Contains(out, `"replayed":7,`) {
		t.Fatalf("replay --rate %d: exit %d, want %d replayed\nstdout:\n%s\nstderr:\n%s", perSecond, code, n, out, errOut)
	}
	at := sentTimes(t, dest, n)
	gap := time.Second / perSecond
	spread := at[n-1].Sub(at[0])
	if least := time.Duration(n-2) * gap; spread < least || spread > 20*time.Second {
		t.Fatalf("the %d publishes spread over %v, want at least %v (and not over 20s): %v", n, spread, least, at)
	}
	for i := 1; i < n; i++ {
		if d := at[i].Sub(at[i-1]); d < gap*4/10 {
			t.Errorf("publishes %d and %d only %v apart at --rate %d (want about %v): %v", i-1, i, d, perSecond, gap, at)
		}
	}
	// A batch's worth of tokens first would be (n-1)*gap = 1.5 s, plus the
	// start; the first publish usually comes some 50 ms after the start.
	if first := at[0].Sub(start); first > time.Duration(n-1)*gap*8/10 {
		t.Errorf("the first publish came %v after the start: it waited for the limiter (want well under %v)", first, time.Duration(n-1)*gap)
	}
}

package live_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/live"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// unsetSize is the SQS client of fauxqs with MaximumMessageSize left out
// of the attributes of the queues whose URL ends in one of unset: a broker
// that does not report a size it was never given (fauxqs always reports
// one).
type unsetSize struct {
	live.SQSAPI
	unset []string
}

func (u unsetSize) GetQueueAttributes(ctx context.Context, in *awssqs.GetQueueAttributesInput, opts ...func(*awssqs.Options)) (*awssqs.GetQueueAttributesOutput, error) {
	out, err := u.SQSAPI.GetQueueAttributes(ctx, in, opts...)
	if err != nil || in.QueueUrl == nil {
		return out, err
	}
	for _, name := range u.unset {
		if strings.HasSuffix(*in.QueueUrl, "/"+name) {
			delete(out.Attributes, string(sqstypes.QueueAttributeNameMaximumMessageSize))
		}
	}
	return out, nil
}

// TestSQSUnsetMaximumMessageSizeIsSQSDefault: a queue that reports no
// MaximumMessageSize takes SQS's default for a queue given none (256 KiB),
// neither the transport's 1 MiB ceiling nor nothing: a dead-letter queue
// left unset under a 1 MiB source is reported smaller (262144 bytes), and
// an unset source over a 256 KiB dead-letter queue is not (fauxqs, with
// the attribute left out of its answers).
func TestSQSUnsetMaximumMessageSizeIsSQSDefault(t *testing.T) {
	ctx, c, mk := sqsEmulator(t)
	run := fmt.Sprintf("unset%d", time.Now().UnixNano()%1e9)
	mk(run+"-orders", map[string]string{"MaximumMessageSize": "1048576"})
	mk(run+"-orders-dlq", nil)
	mk(run+"-refunds", nil)
	mk(run+"-refunds-dlq", map[string]string{"MaximumMessageSize": "262144"})
	f := parse(t, fmt.Sprintf(`subscriptions:
  - name: orders
    transport: sqs
    channelName: %[1]s-orders
    deadLetterRoutingKey: %[1]s-orders-dlq
    handler: {type: builtin, name: ack}
  - name: refunds
    transport: sqs
    channelName: %[1]s-refunds
    deadLetterRoutingKey: %[1]s-refunds-dlq
    handler: {type: builtin, name: ack}
`, run))
	api := unsetSize{SQSAPI: c.SQS, unset: []string{run + "-orders-dlq", run + "-refunds"}}
	probers := map[config.Transport]live.Prober{config.TransportSQS: live.SQS{
		Client: func(context.Context, *config.File) (live.SQSAPI, error) { return api, nil },
	}}
	fs := live.Check(ctx, f, probers, rules.Default())
	if d := find(fs, "orders", lint.RuleDestinationMessageSize); d == nil || !strings.Contains(d.Message, "up to 262144 bytes, smaller than the source's 1048576") {
		t.Errorf("orders (dead-letter queue's size unset, source 1 MiB): %+v%s", d, dump(fs))
	}
	if len(fs) != 1 {
		t.Errorf("findings = %d, want 1 (refunds' unset source is 256 KiB, as its dead-letter queue)%s", len(fs), dump(fs))
	}
}

// TestGCPBudgetOffCannotRunDownUnreported: a subscription whose budget is
// off (requeueCount: -1) never waits for a delivery count, so a broker
// subscription without the file's dead-letter policy is drift, not a
// budget that cannot run down (Google's Pub/Sub emulator).
func TestGCPBudgetOffCannotRunDownUnreported(t *testing.T) {
	ctx := context.Background()
	client, srv := gcptest.Start(t, "demo", nil, gcp.Connect)
	pj := srv.Project
	for _, topic := range []string{"budget-off", "budget-on"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + pj + "/topics/" + topic}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name: "projects/" + pj + "/subscriptions/" + topic + "-sub", Topic: "projects/" + pj + "/topics/" + topic, AckDeadlineSeconds: 30,
		}); err != nil {
			t.Fatal(err)
		}
	}
	f := parse(t, `connections:
  gcp:
    projectId: `+pj+`
subscriptions:
  - name: off
    transport: gcp
    channelName: budget-off-sub
    requeueCount: -1
    deadLetterRoutingKey: off-dlq
    handler: {type: builtin, name: defer}
    gcp:
      deadLetterPolicy:
        topic: off-native
        maxDeliveryAttempts: 10
  - name: on
    transport: gcp
    channelName: budget-on-sub
    requeueCount: 3
    deadLetterRoutingKey: on-dlq
    handler: {type: builtin, name: defer}
    gcp:
      deadLetterPolicy:
        topic: on-native
        maxDeliveryAttempts: 10
`)
	probers := map[config.Transport]live.Prober{config.TransportGCP: live.GCP{
		Client: func(context.Context, *config.File, string) (*pubsub.Client, error) { return client, nil },
	}}
	fs := live.Check(ctx, f, probers, rules.Default())
	if c := find(fs, "off", lint.RuleBudgetCannotRunDown); c != nil {
		t.Errorf("requeueCount -1 reported as a budget that cannot run down: %s%s", c.Message, dump(fs))
	}
	if find(fs, "off", lint.RuleNativeLimitDrift) == nil {
		t.Errorf("off: no drift for the policy missing on the broker%s", dump(fs))
	}
	if find(fs, "on", lint.RuleBudgetCannotRunDown) == nil {
		t.Errorf("on (requeueCount 3, no policy on the broker): no budget-cannot-run-down%s", dump(fs))
	}
}

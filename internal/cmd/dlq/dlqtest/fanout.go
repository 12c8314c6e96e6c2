package dlqtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// SNSFanOut is an SNS topic on the shared fauxqs with queues subscribed to
// it and a dead-letter queue: the set-up of the fan-out and shared
// dead-letter tests on SQS. Its resources are named after Run.
type SNSFanOut struct {
	// Run makes the names of this test's resources unique.
	Run string
	// Clients are the SQS and SNS clients on Emulator.
	Clients *sqs.Clients
	// Emulator is the shared fauxqs.
	Emulator *sqstest.Emulator
}

// NewSNSFanOut makes topic Q("placed"), a queue Q(name) subscribed to it
// for each of queues, and the queue Q("dlq"); prefix starts Run.
func NewSNSFanOut(t *testing.T, prefix string, queues ...string) SNSFanOut {
	t.Helper()
	ctx := context.Background()
	emu := cmdtest.SharedSQS(t)
	s := SNSFanOut{Run: fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e9), Emulator: emu,
		Clients: sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)}
	for _, n := range queues {
		if err := sqs.NewChannelMaker(s.Clients, sqs.ChannelOptions{Queue: s.Q(n), Topic: s.Q("placed")}).EnsureChannels(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := sqs.NewChannelMaker(s.Clients, sqs.ChannelOptions{Queue: s.Q("dlq")}).EnsureChannels(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// Q is the name n of this test's resources: n-Run.
func (s SNSFanOut) Q(n string) string { return n + "-" + s.Run }

// Subscription is the subscriptions-file entry of subscription name: the
// queue Q(name) fed by the topic Q("placed"), dead-lettering into dlq
// ("": no deadLetterRoutingKey).
func (s SNSFanOut) Subscription(name, dlq string) string {
	e := "  - name: " + name + "\n    transport: sqs\n    routingKey: " + s.Q("placed") + "\n    channelName: " + s.Q(name) +
		"\n    sqs: {channelType: pubSub}\n    handler: {type: builtin, name: ack}\n"
	if dlq != "" {
		e += "    deadLetterRoutingKey: " + dlq + "\n"
	}
	return e
}

// File writes a subscriptions file with the emulator's connection and the
// entries subs (Subscription) and returns its path.
func (s SNSFanOut) File(t *testing.T, subs ...string) string {
	t.Helper()
	file := fmt.Sprintf("connections:\n  aws:\n    region: %s\n    endpoint: %s\nsubscriptions:\n", sqstest.Region, s.Emulator.Endpoint)
	for _, e := range subs {
		file += e
	}
	return WriteYAML(t, file)
}

// Peek is `dlq peek sqs://QUEUE -o json` on the emulator: the JSON lines
// of what queue holds; a non-zero exit fails t.
func (s SNSFanOut) Peek(t *testing.T, queue string) string {
	t.Helper()
	code, out, errOut := DLQRun(t, "peek", "sqs://"+queue, "--endpoint", s.Emulator.Endpoint, "--region", sqstest.Region, "-o", "json")
	if code != cmdutil.ExitOK {
		t.Fatalf("peek %s: exit %d\n%s%s", queue, code, out, errOut)
	}
	return out
}

// PubSubTopics starts a Pub/Sub emulator (project named after name) with
// the topics and the subscriptions subs (subscription: its topic, 60 s ack
// deadline); it returns the client, the emulator and the full name of a
// subscription.
func PubSubTopics(t *testing.T, name string, topics []string, subs map[string]string) (*pubsub.Client, *gcptest.Server, func(string) string) {
	t.Helper()
	ctx := context.Background()
	client, srv := gcptest.Start(t, name, nil, gcp.Connect)
	pj := srv.Project
	topic := func(n string) string { return "projects/" + pj + "/topics/" + n }
	subName := func(n string) string { return "projects/" + pj + "/subscriptions/" + n }
	for _, n := range topics {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
			t.Fatal(err)
		}
	}
	for sub, tp := range subs {
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: subName(sub), Topic: topic(tp), AckDeadlineSeconds: 60}); err != nil {
			t.Fatal(err)
		}
	}
	return client, srv, subName
}

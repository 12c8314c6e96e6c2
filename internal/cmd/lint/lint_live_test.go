package lint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/live"
	"github.com/brightergo/brighter/internal/transport"
)

// liveCorpus is the broker state testdata/lint/live's files are written
// against: what exists on fauxqs, Google's Pub/Sub emulator and the
// RocketMQ test broker, under a prefix of this run.
type liveCorpus struct {
	env map[string]string
}

func (c liveCorpus) getenv(k string) (string, bool) { v, ok := c.env[k]; return v, ok }

// seedLiveCorpus makes the channels the corpus's files expect to exist
// (and, for the held-policy files, a policy whose target is missing or
// unsubscribed).
func seedLiveCorpus(t *testing.T) liveCorpus {
	t.Helper()
	ctx := context.Background()
	prefix := fmt.Sprintf("lv%d", time.Now().UnixNano()%1_000_000_000)
	// SQS (fauxqs).
	emu := cmdtest.SharedSQS(t)
	sc := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	mkQueue := func(name string, attrs map[string]string) {
		if _, err := sc.SQS.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs}); err != nil {
			t.Fatalf("create queue %s: %v", name, err)
		}
	}
	for _, q := range []string{"-orders-dlq", "-orders-invalid", "-orders-native"} {
		mkQueue(prefix+q, nil)
	}
	arn := func(name string) string { return "arn:aws:sqs:" + sqstest.Region + ":000000000000:" + name }
	mkQueue(prefix+"-orders", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + arn(prefix+"-orders-native") + `","maxReceiveCount":"5"}`})
	mkQueue(prefix+"-held", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + arn(prefix+"-nowhere") + `","maxReceiveCount":"5"}`})
	// SNS: a topic no queue subscribes to (sns-subscription.yaml).
	if _, err := sc.SNS.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String(prefix + "-events-bare")}); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	// Pub/Sub (Google's emulator).
	client, srv := gcptest.Start(t, "lint", nil, gcp.Connect)
	pj := srv.Project
	topic := func(n string) string { return "projects/" + pj + "/topics/" + prefix + n }
	sub := func(n string) string { return "projects/" + pj + "/subscriptions/" + prefix + n }
	for _, n := range []string{"-payments", "-payments-dlq", "-payments-invalid", "-payments-dlq-bare", "-payments-held-native"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*pubsubpb.Subscription{
		{Name: sub("-payments-sub"), Topic: topic("-payments")},
		{Name: sub("-payments-dlq-sub"), Topic: topic("-payments-dlq")},
		{Name: sub("-held-sub"), Topic: topic("-payments"),
			DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: topic("-payments-held-native"), MaxDeliveryAttempts: 5}},
	} {
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, s); err != nil {
			t.Fatalf("create subscription %s: %v", s.Name, err)
		}
	}
	// RocketMQ (the test broker, which answers TOPIC_NOT_FOUND).
	rmq, err := rmqtest.Start(rmqtest.Options{})
	if err != nil {
		t.Fatalf("start the RocketMQ test broker: %v", err)
	}
	t.Cleanup(rmq.Close)
	for _, n := range []string{"-refunds", "-refunds-dlq", "-refunds-invalid"} {
		rmq.CreateTopic(prefix + n)
	}
	// The SDK reads the credentials from the environment, as in production.
	cfg := sqstest.Config()
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	return liveCorpus{env: map[string]string{
		"PREFIX": prefix, "SQS_ENDPOINT": emu.Endpoint, "GCP_PROJECT": pj, "GCP_EMULATOR": srv.Addr, "RMQ_ENDPOINT": rmq.Endpoint(),
	}}
}

// liveFinding is one finding of `lint --format json`.
type liveFinding struct {
	Rule, Severity, Message, Subscription string
}

// lintLive runs `brighter lint --live --format json path` with env and
// returns its findings of rule.
func lintLive(t *testing.T, c liveCorpus, path, rule string) []liveFinding {
	t.Helper()
	io, out, errOut := cmdtest.FakeIO("", false)
	io.Getenv = c.getenv
	run(context.Background(), io, []string{"lint", "--live", "--format", "json", path})
	var rep struct {
		Findings []liveFinding `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("lint --live %s: output is not JSON: %v\n%s\n%s", path, err, out, errOut)
	}
	var got []liveFinding
	for _, f := range rep.Findings {
		if f.Rule == rule {
			got = append(got, f)
		}
		if f.Rule == lint.RuleLiveCheckFailed {
			t.Errorf("lint --live %s: %s: %s", path, f.Rule, f.Message)
		}
	}
	return got
}

// consumeValidates opens the file's subscription as `brighter consume`
// does at start-up (makeChannels: validate in every corpus file), and
// returns its error, nil when consume would start.
func consumeValidates(t *testing.T, c liveCorpus, path string) error {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse(path, data, c.getenv)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s := f.Subscriptions[0]
	if s.MakeChannels != config.MakeChannelsValidate {
		t.Fatalf("%s: makeChannels %q, want validate", path, s.MakeChannels)
	}
	var tr interface {
		Open(context.Context, *config.File, *config.Subscription, *slog.Logger) (*transport.Channel, error)
	}
	switch s.Transport {
	case config.TransportSQS:
		tr = &transport.SQS{}
	case config.TransportGCP:
		g := &transport.GCP{}
		t.Cleanup(func() { _ = g.CloseClients() })
		tr = g
	case config.TransportRocketMQ:
		tr = transport.RocketMQ{}
	default:
		t.Fatalf("%s: transport %s", path, s.Transport)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := tr.Open(ctx, f, s, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		_ = ch.Close(ctx)
	}
	return err
}

// TestLintLiveMissingDestinations lints each file of
// testdata/lint/live against fauxqs, Google's Pub/Sub emulator and the
// RocketMQ test broker: a file named *-ok has no missing-destination
// finding; every other file names one kind of missing destination and gets
// exactly one, an Error naming the subscription and the destination. On the
// same files `brighter consume`'s start-up with makeChannels: validate
// refuses exactly the files lint flags, and for the same reason (once
// the live check in CI passed what production refused).
func TestLintLiveMissingDestinations(t *testing.T) {
	c := seedLiveCorpus(t)
	files, err := filepath.Glob("../../../testdata/lint/live/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	kinds := map[string]bool{}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			got := lintLive(t, c, path, lint.RuleMissingDestination)
			refused := consumeValidates(t, c, path)
			if strings.HasSuffix(name, "-ok") {
				if len(got) != 0 {
					t.Errorf("findings on a file whose channels all exist: %+v", got)
				}
				if refused != nil {
					t.Errorf("consume refused a file lint passes: %v", refused)
				}
				return
			}
			kinds[name] = true
			if len(got) != 1 {
				t.Fatalf("%d missing-destination findings, want 1: %+v", len(got), got)
			}
			f := got[0]
			absent := map[bool]string{true: "held", false: "absent"}[strings.Contains(name, "held")]
			if strings.Contains(name, "unsubscribed") || name == "sns-subscription" {
				absent = "bare"
			}
			if f.Severity != "error" || f.Subscription == "" || !strings.Contains(f.Message, `"`+f.Subscription+`"`) ||
				!namedAsWritten(f.Message, c.env["PREFIX"], absent == "held") || !strings.Contains(f.Message, "-"+absent) && !strings.Contains(f.Message, "nowhere") {
				// The destination is named as the file writes it: a value that
				// came from ${VAR} is never shown expanded.
				t.Errorf("finding %+v: want an error naming the subscription and the missing destination (%s) as the file writes it (${PREFIX}, not its value)", f, absent)
			}
			if refused == nil {
				t.Fatal("consume with makeChannels: validate starts on a file lint --live flags")
			}
			if !errors.Is(transport.LiveMissing(refused), live.ErrMissingChannel) {
				t.Errorf("consume refused for another reason than a missing channel: %v", refused)
			}
		})
	}
	for _, k := range []string{"sqs-source", "sqs-dead-letter", "sqs-invalid-message", "sqs-redrive",
		"gcp-subscription", "sqs-held-redrive", "sns-topic", "sns-subscription",
		"gcp-dead-letter", "gcp-invalid-message", "gcp-dead-letter-unsubscribed", "gcp-dead-letter-policy", "gcp-held-dead-letter-policy",
		"rocketmq-dead-letter", "rocketmq-invalid-message"} {
		if !kinds[k] {
			t.Errorf("no broken file testdata/lint/live/%s.yaml", k)
		}
	}
}

// namedAsWritten reports whether msg names a destination as the file writes
// it: ${PREFIX}, never the variable's value. A destination the
// broker holds (held: the queue's own RedrivePolicy) is named as the broker
// reports it, which may contain the value.
func namedAsWritten(msg, value string, held bool) bool {
	if held {
		return strings.Contains(msg, "${PREFIX}") || strings.Contains(msg, value)
	}
	return strings.Contains(msg, "${PREFIX}") && !strings.Contains(msg, value)
}

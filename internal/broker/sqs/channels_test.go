package sqs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
)

func TestMakeChannelsCreateTwiceThenValidate_R20(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	ctx := context.Background()
	opts := ChannelOptions{Queue: uniq("mk.q"), Topic: uniq("mk.topic"), DeadLetter: uniq("mk-dlq"), Invalid: uniq("mk-inv"),
		VisibilityTimeout: 7 * time.Second, RedrivePolicy: &RedrivePolicy{DeadLetterQueue: uniq("mk-native"), MaxReceiveCount: 5}}
	for i := range 2 {
		if err := NewChannelMaker(c, opts).EnsureChannels(ctx); err != nil {
			t.Fatalf("create #%d: %v", i+1, err)
		}
	}
	cm := NewChannelMaker(c, ChannelOptions{MakeChannels: broker.MakeValidate, Queue: opts.Queue, Topic: opts.Topic,
		DeadLetter: opts.DeadLetter, Invalid: opts.Invalid, RedrivePolicy: opts.RedrivePolicy})
	if err := cm.EnsureChannels(ctx); err != nil {
		t.Fatalf("validate after create: %v", err)
	}
	if cm.Result.QueueName != QueueName(opts.Queue, false) || !strings.Contains(cm.Result.QueueName, "_") || cm.Result.TopicARN == "" {
		t.Errorf("result %+v", cm.Result)
	}
	attrs, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(cm.Result.QueueURL), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	if attrs.Attributes["VisibilityTimeout"] != "7" {
		t.Errorf("VisibilityTimeout %q, want 7", attrs.Attributes["VisibilityTimeout"])
	}
	if rp := attrs.Attributes["RedrivePolicy"]; !strings.Contains(rp, QueueName(opts.RedrivePolicy.DeadLetterQueue, false)) || !strings.Contains(rp, "5") {
		t.Errorf("RedrivePolicy %q", rp)
	}
	if !strings.Contains(attrs.Attributes["Policy"], cm.Result.TopicARN) {
		t.Errorf("queue policy %q does not let the topic send", attrs.Attributes["Policy"])
	}
	sub, err := findSubscription(ctx, c.SNS, cm.Result.TopicARN, cm.Result.QueueARN)
	if err != nil || sub == "" {
		t.Fatalf("subscription %q %v", sub, err)
	}
	sa, err := c.SNS.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: &sub})
	if err != nil {
		t.Fatal(err)
	}
	if sa.Attributes["RawMessageDelivery"] != "true" {
		t.Errorf("RawMessageDelivery %q, want the default true", sa.Attributes["RawMessageDelivery"])
	}
}

func TestMakeChannelsValidateNamesWhatIsMissing_R20(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, topic, dlq := uniq("val-q"), uniq("val-topic"), uniq("val-dlq")
	err := NewChannelMaker(c, ChannelOptions{MakeChannels: broker.MakeValidate, Queue: q, Topic: topic, DeadLetter: dlq}).EnsureChannels(context.Background())
	if !errors.Is(err, ErrMissingChannels) {
		t.Fatalf("err %v, want ErrMissingChannels", err)
	}
	for _, want := range []string{"queue " + q, "dead-letter queue " + dlq, "SNS topic " + topic} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestMakeChannelsAssumeMakesNoCall_R20(t *testing.T) {
	t.Parallel()
	fc, calls := faultyClients(t, nil)
	cm := NewChannelMaker(fc, ChannelOptions{MakeChannels: broker.MakeAssume, Queue: "a.b", Topic: "t", DeadLetter: "d"})
	if err := cm.EnsureChannels(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := calls.calls.Load(); n != 0 {
		t.Errorf("assume made %d broker calls, want 0", n)
	}
	if cm.Result.QueueName != "a_b" {
		t.Errorf("queue name %q", cm.Result.QueueName)
	}
	if err := NewChannelMaker(fc, ChannelOptions{MakeChannels: "sometimes", Queue: "q"}).EnsureChannels(context.Background()); err == nil || !strings.Contains(err.Error(), "create, validate, assume") {
		t.Errorf("bad makeChannels: %v", err)
	}
}

func TestNativeRedriveMovesMessageWithoutMetadata_R9(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, native := uniq("redrive"), uniq("redrive-native")
	k := setup(t, c, ChannelOptions{Queue: q, RedrivePolicy: &RedrivePolicy{DeadLetterQueue: native, MaxReceiveCount: 2}}, ConsumerOptions{})
	m0 := newMessage(q)
	send(t, c, ProducerOptions{}, m0)
	ctx := context.Background()
	for range 2 {
		m := receiveOne(t, k, 10*time.Second)
		if err := k.Requeue(ctx, m, 0); err != nil {
			t.Fatal(err)
		}
	}
	assertEmpty(t, k, time.Second)
	nk, _ := NewConsumer(c, ConsumerOptions{Queue: native})
	got := receiveOne(t, nk, 10*time.Second)
	if got.Header.MessageID != m0.Header.MessageID || got.HasRejectionMetadata() {
		t.Errorf("native DLQ copy id %s metadata %v", got.Header.MessageID, got.Header.Bag)
	}
}

package gcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/brightergo/brighter/internal/broker"
)

// Stable log message texts of channel creation (tests match them).
const (
	// LogIAMTolerated is R-20's Warning: an IAM helper abandoned its binding.
	LogIAMTolerated = "IAM binding for native dead-lettering abandoned; native dead-lettering may be inactive"
	// LogBudgetInert is R-11's Warning (R-26: once per channel, at creation).
	LogBudgetInert = "delivery budget cannot run down on this subscription"
	// LogLabelsNotUpdated is the Warning of a restart whose subscription
	// labels differ from the configuration on a server that refuses labels
	// in an update mask (Google's emulator); the other fields are updated.
	LogLabelsNotUpdated = "subscription labels differ but the server refused to update them; left as they are"
	// ConsequenceDeadLetteringInactive is R-20's fixed consequence text.
	ConsequenceDeadLetteringInactive = "native dead-lettering may be inactive"
	// NoteIAMOnEmulator is the note attribute of R-20's Warning on Google's
	// Pub/Sub emulator (ChannelOptions.OnEmulator): the Warning is expected
	// there, and the native dead-lettering works without the binding.
	NoteIAMOnEmulator = "expected on the Pub/Sub emulator, which has no IAM service; it forwards to the dead-letter topic without the binding, so nothing needs doing"
	// StatusSkippedOnEmulator is the status attribute of R-20's Warning on
	// Google's emulator (ChannelOptions.OnEmulator): the binding was not
	// attempted, no call was made.
	StatusSkippedOnEmulator = "SkippedOnEmulator"
	// ReasonNoDeadLetterPolicy is R-11's reason for Pub/Sub.
	ReasonNoDeadLetterPolicy = "Pub/Sub sets delivery_attempt only on a subscription with a DeadLetterPolicy; without one the delivery count never advances"
)

// Defaults of a subscription and its DeadLetterPolicy, the same as Brighter
// .NET's GcpPubSubSubscription and DeadLetterPolicy give them.
const (
	DefaultAckDeadline           = 30 * time.Second
	DefaultMaxRequeueDelay       = 600 * time.Second
	DefaultDeadLetterAckDeadline = 60 * time.Second
	DefaultMaxDeliveryAttempts   = 10
)

// ErrChannelMissing is wrapped by EnsureChannels in validate mode for each
// topic or subscription that does not exist.
var ErrChannelMissing = errors.New("channel does not exist")

// DeadLetterPolicy is the subscription's native Pub/Sub dead-letter policy
// (Brighter .NET's DeadLetterPolicy): after MaxDeliveryAttempts the service
// forwards a message to Topic without Brighter's rejection metadata.
type DeadLetterPolicy struct {
	// Topic is the policy's dead-letter topic (id or full name). Required.
	Topic string
	// Subscription is the subscription made on Topic so forwarded messages
	// are kept; "" means "dlq-<subscription>".
	Subscription string
	// MaxDeliveryAttempts is 5..100 on the real service; 0 means
	// DefaultMaxDeliveryAttempts (10), what a subscriptions file that leaves
	// maxDeliveryAttempts out gets. A file's explicit 0 never reaches here:
	// internal/config stores it as 5 (config.GCPDefaultMaxDeliveryAttempts,
	// what Pub/Sub applies for 0).
	MaxDeliveryAttempts int
	// AckDeadline is the ack deadline of Subscription; 0 means 60 s.
	AckDeadline time.Duration
	// PublisherMember is the member granted roles/pubsub.publisher on Topic;
	// "" means the Pub/Sub service agent of the project.
	PublisherMember string
	// SubscriberMember is the member granted roles/pubsub.subscriber on the
	// subscription; "" means the Pub/Sub service agent of the project.
	SubscriberMember string
}

// ChannelOptions describes one subscription's infrastructure.
type ChannelOptions struct {
	// Topic is the source topic (id or full name). Required.
	Topic string
	// Subscription is the subscription (id or full name). Required.
	Subscription string
	// MakeChannels is create, validate or assume ("" means create).
	MakeChannels broker.MakeChannels
	// AckDeadline is the subscription's ack deadline; 0 means 30 s.
	AckDeadline time.Duration
	// EnableMessageOrdering creates the subscription with ordering.
	EnableMessageOrdering bool
	// RequeueDelay is the RetryPolicy's minimum back-off; 0 configures no
	// RetryPolicy (immediate redelivery), as Brighter does. The consumers
	// hold a deferred message for its delay before the Nack or the lapse
	// of its deadline, and the back-off runs after that: the gaps between
	// deliveries are the delay plus a back-off that grows from
	// RequeueDelay towards MaxRequeueDelay.
	RequeueDelay time.Duration
	// MaxRequeueDelay is the RetryPolicy's maximum back-off; 0 means 600 s.
	MaxRequeueDelay time.Duration
	// RequeueCount is the redelivery budget (-1 = unlimited); with any other
	// value and no DeadLetterPolicy R-11's Warning is logged once.
	RequeueCount int
	// DeadLetterPolicy is the native policy; nil for none.
	DeadLetterPolicy *DeadLetterPolicy
	// DeadLetterTopic is deadLetterRoutingKey ("" for none); created with a
	// subscription of the same id.
	DeadLetterTopic string
	// InvalidTopic is invalidMessageRoutingKey ("" for none); created with a
	// subscription of the same id.
	InvalidTopic string
	// Labels are added to the subscription's labels (which always carry
	// source=brighter); optional.
	Labels map[string]string
	// KnownTopics holds what calls already made answered about topics
	// (full names): true for a topic that exists, false for one that does
	// not (NotFound). Validate does not ask about these again: the start-up
	// probe's GetTopic (ProbeTopic) is validate's first call. Optional.
	KnownTopics map[string]bool
	// ProjectNumber derives the service agent; nil means
	// ResourceManagerProjectNumber.
	ProjectNumber ProjectNumberFunc
	// Logger receives the Warnings; nil means slog.Default().
	Logger *slog.Logger
	// OnEmulator says that the client talks to Google's Pub/Sub emulator
	// (connections.gcp.emulatorHost or PUBSUB_EMULATOR_HOST): the IAM
	// bindings are not attempted (no IAM call, no ProjectNumber: nothing
	// reaches a real Google endpoint), and R-20's Warning says so
	// (status=StatusSkippedOnEmulator) and carries note=NoteIAMOnEmulator
	// instead of the fix for a real project.
	OnEmulator bool
}

// Channels provisions one subscription's infrastructure (broker.ChannelMaker).
type Channels struct {
	client *pubsub.Client
	opts   ChannelOptions
	log    *slog.Logger
}

// NewChannels makes a Channels for opts on client.
func NewChannels(client *pubsub.Client, opts ChannelOptions) *Channels {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ProjectNumber == nil {
		opts.ProjectNumber = ResourceManagerProjectNumber
	}
	if opts.MakeChannels == "" {
		opts.MakeChannels = broker.MakeCreate
	}
	return &Channels{client: client, opts: opts, log: opts.Logger}
}

func (c *Channels) topic(t string) string { return topicName(c.client.Project(), t) }
func (c *Channels) sub(s string) string   { return SubscriptionName(c.client.Project(), s) }

// EnsureChannels applies makeChannels: assume makes no broker call; validate
// returns an error wrapping ErrChannelMissing naming each missing topic or
// subscription, and each dead-letter topic (deadLetterRoutingKey, the
// DeadLetterPolicy's, the one the subscription holds) with no subscription
// to keep what is forwarded there; create makes the source topic, the DeadLetterPolicy's topic
// and subscription, the subscription (ack deadline, ordering, RetryPolicy,
// DeadLetterPolicy; an existing one is updated with an update mask), the
// rejection topics each with a subscription, and the two IAM bindings of
// R-20, tolerating only what R-20 names. In every mode it first logs R-11's
// Warning once when RequeueCount != -1 and there is no DeadLetterPolicy
// . Errors name the resource and wrap the service's error.
func (c *Channels) EnsureChannels(ctx context.Context) error {
	o := c.opts
	if o.RequeueCount != -1 && o.DeadLetterPolicy == nil {
		c.log.WarnContext(ctx, LogBudgetInert, "subscription", c.sub(o.Subscription), "requeue_count", o.RequeueCount, "reason", ReasonNoDeadLetterPolicy)
	}
	switch o.MakeChannels {
	case broker.MakeAssume:
		return nil
	case broker.MakeValidate:
		return c.validate(ctx)
	case broker.MakeCreate:
		return c.create(ctx)
	}
	return fmt.Errorf("makeChannels: unknown value %q: valid values are create, validate, assume", o.MakeChannels)
}

func (c *Channels) validate(ctx context.Context) error {
	var errs []error
	topics := []string{c.opts.Topic, c.opts.DeadLetterTopic, c.opts.InvalidTopic}
	if c.opts.DeadLetterPolicy != nil {
		topics = append(topics, c.opts.DeadLetterPolicy.Topic)
	}
	for _, t := range topics {
		if t == "" {
			continue
		}
		if err := c.checkTopic(ctx, "topic", c.topic(t)); err != nil {
			errs = append(errs, err)
		}
	}
	// A dead-letter topic with no subscription loses what is forwarded
	// there: the file's and the DeadLetterPolicy's, and the one
	// the subscription really holds.
	dead := []string{c.opts.DeadLetterTopic}
	if c.opts.DeadLetterPolicy != nil {
		dead = append(dead, c.opts.DeadLetterPolicy.Topic)
	}
	sub, err := c.client.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: c.sub(c.opts.Subscription)})
	if err != nil {
		errs = append(errs, missing("subscription", c.sub(c.opts.Subscription), err))
	} else if held := sub.GetDeadLetterPolicy().GetDeadLetterTopic(); held != "" {
		if err := c.checkTopic(ctx, "topic (the subscription's DeadLetterPolicy)", held); err != nil {
			errs = append(errs, err)
		} else {
			dead = append(dead, held)
		}
	}
	seen := map[string]bool{}
	for _, t := range dead {
		if t == "" || seen[c.topic(t)] {
			continue
		}
		seen[c.topic(t)] = true
		if err := c.keeps(ctx, c.topic(t)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// keeps returns an error wrapping ErrChannelMissing when the existing
// dead-letter topic t has no subscription (what is forwarded there is
// lost); nil when it has one, or when t does not exist (reported already).
func (c *Channels) keeps(ctx context.Context, t string) error {
	it := c.client.TopicAdminClient.ListTopicSubscriptions(ctx, &pubsubpb.ListTopicSubscriptionsRequest{Topic: t, PageSize: 1})
	_, err := it.Next()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, iterator.Done):
		return fmt.Errorf("validate dead-letter topic %s: it has no subscription, so what is forwarded there is lost: %w", t, ErrChannelMissing)
	case status.Code(err) == codes.NotFound:
		return nil
	}
	return fmt.Errorf("validate dead-letter topic %s subscriptions: %w", t, err)
}

// checkTopic returns validate's finding for topic t (a full name, named
// kind): nil when it exists. What KnownTopics holds about t is its answer;
// otherwise it asks Pub/Sub (GetTopic).
func (c *Channels) checkTopic(ctx context.Context, kind, t string) error {
	if found, known := c.opts.KnownTopics[t]; known {
		if found {
			return nil
		}
		return absent(kind, t)
	}
	if _, err := c.client.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: t}); err != nil {
		return missing(kind, t, err)
	}
	return nil
}

func missing(kind, name string, err error) error {
	if status.Code(err) == codes.NotFound {
		return absent(kind, name)
	}
	return fmt.Errorf("validate %s %s: %w", kind, name, err)
}

// absent is validate's finding for a topic or subscription that does not
// exist.
func absent(kind, name string) error {
	return fmt.Errorf("validate %s %s: %w", kind, name, ErrChannelMissing)
}

func (c *Channels) ensureTopic(ctx context.Context, t string) error {
	_, err := c.client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: c.topic(t), Labels: map[string]string{"source": "brighter"}})
	if err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("create topic %s: %w", c.topic(t), err)
	}
	return nil
}

// ensureSubscription creates s, or, when it exists, reads it, compares the
// fields named in mask (ack_deadline_seconds, dead_letter_policy,
// retry_policy, labels) and updates only those that differ, with an update
// mask (never without one: it would crash pstest); nothing differing means
// no update at all, so a restart on unchanged configuration makes no write.
// Labels that differ are updated too, but a server that refuses
// labels in the mask (Google's emulator: InvalidArgument) gets the update
// again without them, and a Warning says the labels were left as they are.
func (c *Channels) ensureSubscription(ctx context.Context, s *pubsubpb.Subscription, mask []string) error {
	_, err := c.client.SubscriptionAdminClient.CreateSubscription(ctx, s)
	if err == nil {
		return nil
	}
	if status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("create subscription %s on %s: %w", s.Name, s.Topic, err)
	}
	if len(mask) == 0 {
		return nil
	}
	cur, err := c.client.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: s.Name})
	if err != nil {
		return fmt.Errorf("read subscription %s: %w", s.Name, err)
	}
	differ := differingFields(cur, s, mask)
	if len(differ) == 0 {
		return nil
	}
	_, err = c.client.SubscriptionAdminClient.UpdateSubscription(ctx, &pubsubpb.UpdateSubscriptionRequest{Subscription: s, UpdateMask: &fieldmaskpb.FieldMask{Paths: differ}})
	if err != nil && status.Code(err) == codes.InvalidArgument && slices.Contains(differ, "labels") {
		c.log.WarnContext(ctx, LogLabelsNotUpdated, "subscription", s.Name, "error", err.Error())
		differ = slices.DeleteFunc(differ, func(f string) bool { return f == "labels" })
		if len(differ) == 0 {
			return nil
		}
		_, err = c.client.SubscriptionAdminClient.UpdateSubscription(ctx, &pubsubpb.UpdateSubscriptionRequest{Subscription: s, UpdateMask: &fieldmaskpb.FieldMask{Paths: differ}})
	}
	if err != nil {
		return fmt.Errorf("update subscription %s (%s): %w", s.Name, strings.Join(differ, ", "), err)
	}
	return nil
}

// differingFields returns the fields of mask whose value in want differs
// from cur, in mask's order.
func differingFields(cur, want *pubsubpb.Subscription, mask []string) []string {
	var out []string
	for _, f := range mask {
		var same bool
		switch f {
		case "ack_deadline_seconds":
			same = cur.GetAckDeadlineSeconds() == want.GetAckDeadlineSeconds()
		case "dead_letter_policy":
			same = proto.Equal(cur.GetDeadLetterPolicy(), want.GetDeadLetterPolicy())
		case "retry_policy":
			same = proto.Equal(cur.GetRetryPolicy(), want.GetRetryPolicy())
		case "labels":
			same = maps.Equal(cur.GetLabels(), want.GetLabels())
		}
		if !same {
			out = append(out, f)
		}
	}
	return out
}

func seconds(d, def time.Duration) int32 {
	if d <= 0 {
		d = def
	}
	return int32((d + time.Second - 1) / time.Second)
}

func (c *Channels) create(ctx context.Context) error {
	o := c.opts
	if err := c.ensureTopic(ctx, o.Topic); err != nil {
		return err
	}
	sub := &pubsubpb.Subscription{
		Name: c.sub(o.Subscription), Topic: c.topic(o.Topic), AckDeadlineSeconds: seconds(o.AckDeadline, DefaultAckDeadline),
		EnableMessageOrdering: o.EnableMessageOrdering, Labels: subscriptionLabels(o.Labels),
	}
	if o.RequeueDelay > 0 {
		maxDelay := o.MaxRequeueDelay
		if maxDelay <= 0 {
			maxDelay = DefaultMaxRequeueDelay
		}
		sub.RetryPolicy = &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(o.RequeueDelay), MaximumBackoff: durationpb.New(maxDelay)}
	}
	dlp := o.DeadLetterPolicy
	if dlp != nil {
		if err := c.ensureTopic(ctx, dlp.Topic); err != nil {
			return err
		}
		dsub := dlp.Subscription
		if dsub == "" {
			dsub = "dlq-" + lastSegment(o.Subscription)
		}
		if err := c.ensureSubscription(ctx, &pubsubpb.Subscription{Name: c.sub(dsub), Topic: c.topic(dlp.Topic),
			AckDeadlineSeconds: seconds(dlp.AckDeadline, DefaultDeadLetterAckDeadline), Labels: map[string]string{"source": "brighter"}}, nil); err != nil {
			return err
		}
		if err := c.ensureBinding(ctx, HelperDeadLetterPublisher, dlp.PublisherMember, "roles/pubsub.publisher", c.topic(dlp.Topic), true); err != nil {
			return err
		}
		attempts := dlp.MaxDeliveryAttempts
		if attempts == 0 {
			attempts = DefaultMaxDeliveryAttempts
		}
		sub.DeadLetterPolicy = &pubsubpb.DeadLetterPolicy{DeadLetterTopic: c.topic(dlp.Topic), MaxDeliveryAttempts: int32(attempts)}
	}
	if err := c.ensureSubscription(ctx, sub, []string{"ack_deadline_seconds", "dead_letter_policy", "retry_policy", "labels"}); err != nil {
		return err
	}
	if dlp != nil {
		if err := c.ensureBinding(ctx, HelperSubscriber, dlp.SubscriberMember, "roles/pubsub.subscriber", sub.Name, false); err != nil {
			return err
		}
	}
	for _, t := range []string{o.DeadLetterTopic, o.InvalidTopic} {
		if t == "" {
			continue
		}
		if err := c.ensureTopic(ctx, t); err != nil {
			return err
		}
		if err := c.ensureSubscription(ctx, &pubsubpb.Subscription{Name: c.sub(lastSegment(t)), Topic: c.topic(t),
			AckDeadlineSeconds: seconds(0, DefaultDeadLetterAckDeadline), Labels: map[string]string{"source": "brighter"}}, nil); err != nil {
			return err
		}
	}
	return nil
}

// subscriptionLabels returns extra merged over source=brighter.
func subscriptionLabels(extra map[string]string) map[string]string {
	out := map[string]string{"source": "brighter"}
	maps.Copy(out, extra)
	return out
}

func lastSegment(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[i+1:]
		}
	}
	return name
}

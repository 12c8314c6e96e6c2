package live

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/infra"
)

// DeadLetterTopic is a dead-letter topic of a subscription: the topic its
// dead-letter policy names (in the file, or held by the source) or its
// deadLetterRoutingKey.
type DeadLetterTopic struct {
	// Field is the subscription's field that names the topic
	// ("gcp.deadLetterPolicy.topic" for the policy's, the file's or the
	// source's; "deadLetterRoutingKey").
	Field string
	// Topic is the topic's id or full resource name, as written.
	Topic string
	// Pos is where the source declares the topic or the policy naming it
	// (--infra); zero on a broker.
	Pos config.Position
}

// ReaderProber is implemented by a Prober of a transport whose dead-letter
// destinations keep nothing unless something reads them (Pub/Sub topics):
// Check then reports each dead-letter topic no subscription reads
// (dead-letter-topic-unsubscribed).
type ReaderProber interface {
	// UnreadDeadLetterTopics returns the dead-letter topics of s that no
	// subscription reads. A topic that does not exist, or whose readers
	// the source does not decide, is left out; err reports a source that
	// could not be read.
	UnreadDeadLetterTopics(ctx context.Context, f *config.File, s *config.Subscription) ([]DeadLetterTopic, error)
}

// Both sources of Pub/Sub settings report unread dead-letter topics.
var (
	_ ReaderProber = GCP{}
	_ ReaderProber = InfraGCP{}
)

// deadLetterTopics returns the dead-letter topics of s, each once (by its
// short name): the file's gcp.deadLetterPolicy.topic, deadLetterRoutingKey
// and held, the topic of the dead-letter policy the source holds ("" for
// none), declared at heldPos.
func deadLetterTopics(s *config.Subscription, held string, heldPos config.Position) []DeadLetterTopic {
	var out []DeadLetterTopic
	add := func(field, topic string, pos config.Position) {
		if topic == "" {
			return
		}
		for i := range out {
			if infra.ShortName(out[i].Topic) == infra.ShortName(topic) {
				if !out[i].Pos.IsValid() {
					out[i].Pos = pos
				}
				return
			}
		}
		out = append(out, DeadLetterTopic{Field: field, Topic: topic, Pos: pos})
	}
	if s.GCP != nil && s.GCP.DeadLetterPolicy != nil {
		add("gcp.deadLetterPolicy.topic", s.GCP.DeadLetterPolicy.Topic, config.Position{})
	}
	add("deadLetterRoutingKey", s.DeadLetterRoutingKey, config.Position{})
	add("gcp.deadLetterPolicy.topic", held, heldPos)
	return out
}

// unsubscribedFindings returns the dead-letter-topic-unsubscribed findings
// of s; failed is true when the source could not be read (the one finding
// is then live-check-failed). Subscriptions with makeChannels: create are
// not judged: consume makes a subscription for each dead-letter topic.
func unsubscribedFindings(ctx context.Context, f *config.File, s *config.Subscription, p ReaderProber, src source) []lint.Finding {
	if s.MakeChannels == config.MakeChannelsCreate || s.MakeChannels == "" {
		return nil
	}
	topics, err := p.UnreadDeadLetterTopics(ctx, f, s)
	if errors.Is(err, ErrUndecided) {
		return nil
	}
	if err != nil {
		return []lint.Finding{checkFailed(s, fmt.Sprintf("subscription %q: could not list the subscriptions of its dead-letter topics", s.Name), err)}
	}
	where, fix := "no subscription on the broker reads it", "create a subscription on %s"
	if src.pos.File != "" {
		where, fix = "no subscription declared in the infrastructure files reads it", "declare a subscription on %s (unless one outside these files reads it)"
	}
	var out []lint.Finding
	for _, t := range topics {
		name := infra.ShortName(t.Topic)
		out = append(out, src.at(lint.NewFinding(s, lint.RuleDeadLetterTopicUnsubscribed, t.Field,
			fmt.Sprintf("subscription %q: dead-letter topic %s (%s): %s, so what is dead-lettered there is kept only for the topic's own retention and then lost, and brighter dlq has nothing to read; "+fix,
				s.Name, name, t.Field, where, name)), t.Pos))
	}
	return out
}

// gcpTopicName is topic's full resource name in project.
func gcpTopicName(project, topic string) string {
	if strings.HasPrefix(topic, "projects/") {
		return topic
	}
	return "projects/" + project + "/topics/" + topic
}

// UnreadDeadLetterTopics lists the subscriptions of each dead-letter topic
// of s (the file's, and the one the subscription's DeadLetterPolicy holds
// on the broker) and returns those with none: ReaderProber. A topic or
// subscription that does not exist is left out (missing-destination
// reports it).
func (p GCP) UnreadDeadLetterTopics(ctx context.Context, f *config.File, s *config.Subscription) ([]DeadLetterTopic, error) {
	project := gcpProject(f, s)
	c, err := p.Client(ctx, f, project)
	if err != nil {
		return nil, err
	}
	held := ""
	name := fmt.Sprintf("projects/%s/subscriptions/%s", project, s.ChannelName)
	sub, err := c.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: name})
	switch {
	case err == nil:
		held = sub.GetDeadLetterPolicy().GetDeadLetterTopic()
	case status.Code(err) != codes.NotFound:
		return nil, fmt.Errorf("subscription %s: %w", name, err)
	}
	var out []DeadLetterTopic
	for _, t := range deadLetterTopics(s, held, config.Position{}) {
		full := gcpTopicName(project, t.Topic)
		it := c.TopicAdminClient.ListTopicSubscriptions(ctx, &pubsubpb.ListTopicSubscriptionsRequest{Topic: full, PageSize: 1})
		_, err := it.Next()
		switch {
		case err == nil, status.Code(err) == codes.NotFound:
		case errors.Is(err, iterator.Done):
			out = append(out, t)
		default:
			return nil, fmt.Errorf("topic %s subscriptions: %w", full, err)
		}
	}
	return out, nil
}

// UnreadDeadLetterTopics returns the dead-letter topics of s (the file's,
// and the one the declared subscription's dead-letter policy names) that
// no declared Pub/Sub subscription reads: ReaderProber. An undeclared
// subscription is ErrUndecided; a topic whose readers the files decide only
// at apply time is left out.
func (p InfraGCP) UnreadDeadLetterTopics(_ context.Context, f *config.File, s *config.Subscription) ([]DeadLetterTopic, error) {
	r, ok := p.sub(f, s)
	if !ok {
		return nil, fmt.Errorf("subscription %s: %w", s.ChannelName, ErrUndecided)
	}
	held, heldPos := "", config.Position{}
	var heldRes *infra.Resource
	if r.DeadLetter != nil {
		tv := r.DeadLetter.Topic
		heldPos = tv.Pos
		if t, ok := p.Set.Resolve(infra.KindPubSubTopic, tv); ok {
			heldRes = t
			if t.Name.IsKnown() {
				held = t.Name.V
			}
		} else if tv.IsKnown() {
			held = tv.V
		}
		if held == "" && heldRes == nil {
			heldPos = config.Position{} // decided at apply time: not judged
		}
	}
	var out []DeadLetterTopic
	cands := deadLetterTopics(s, held, heldPos)
	if held == "" && heldRes != nil {
		// The policy refers to a declared topic whose name is decided at
		// apply time: judge that declaration.
		cands = append(cands, DeadLetterTopic{Field: "gcp.deadLetterPolicy.topic", Topic: heldRes.Address, Pos: heldPos})
	}
	for _, t := range cands {
		var topic *infra.Resource
		if held == "" && heldRes != nil && t.Topic == heldRes.Address {
			topic = heldRes
		} else if tr, ok := p.Set.Find(infra.KindPubSubTopic, t.Topic); ok {
			topic = tr
		}
		read, decided := p.Set.Reads(topic, t.Topic)
		if read || !decided {
			continue
		}
		if !t.Pos.IsValid() && topic != nil {
			t.Pos = topic.Pos
		}
		out = append(out, t)
	}
	return out, nil
}

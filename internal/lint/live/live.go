// Package live is `brighter lint --live`: it asks each broker for the native
// redelivery limit actually in force on a subscription (SQS
// GetQueueAttributes RedrivePolicy, Pub/Sub GetSubscription
// DeadLetterPolicy), reports drift between the subscriptions file and the
// broker (native-limit-drift), and checks R-10 (budget-outranked) against
// the broker's value, so the check holds against reality, not just the file.
// Where the broker sets a maximum message size per queue (SQS), it also
// reports a rejection destination smaller than its source
// (destination-message-size; sizes.go).
// On Pub/Sub it reports a dead-letter topic that no subscription reads
// (dead-letter-topic-unsubscribed; deadletter.go).
//
// Each transport answers through the Prober interface; this package holds
// the SQS and Pub/Sub probers. CheckChannels looks up every channel a
// subscription names with the validation consume runs at start-up
// (ChannelValidator, supplied by the command). It reads only: no call here
// creates, changes or deletes anything on a broker.
//
// The same checks run offline for `brighter lint --infra` (infra.go):
// InfraProbers answer the Prober questions from the resources
// infrastructure files declare (internal/lint/infra), so Check judges one
// rule set against either source, and CheckInfra adds the rules only
// those files make possible.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/pump, github.com/spf13/cobra
package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
)

// checkFailed is the live-check-failed finding of s: what (its own words,
// quoting the file's values as written) followed by the broker
// call's error as it is, naming what was asked as the broker saw it (the
// expanded project, channel and endpoint, as consume and dlq name them),
// not the file's ${VAR} text. Secrets in it are still masked: lint passes
// every finding through the command's redaction (docs/security.md).
func checkFailed(s *config.Subscription, what string, err error) lint.Finding {
	f := lint.NewFinding(s, lint.RuleLiveCheckFailed, "", what)
	f.Message += ": " + err.Error()
	return f
}

// Prober reads from the broker the native redelivery limit in force for a
// subscription. ok is false when the broker has none configured; err
// reports a subscription or queue that cannot be read (missing, broker
// unreachable, access refused).
type Prober interface {
	NativeLimit(ctx context.Context, f *config.File, s *config.Subscription) (m lint.Limit, ok bool, err error)
}

// Declarer is implemented by a Prober whose settings are declared in
// files rather than held by a broker (--infra): Check then names the
// declaration instead of "the broker" and points its findings there, with
// the subscription's field as the related position.
type Declarer interface {
	// Declaration returns how findings name the declaration of s's
	// channel ("aws_sqs_queue.orders") and where it starts; ok is false
	// when none declares it.
	Declaration(f *config.File, s *config.Subscription) (name string, pos config.Position, ok bool)
}

// ErrUndecided is wrapped by a Prober's error when its source does not
// decide the setting asked for: a declaration whose value is known only
// at apply time, or no declaration at all (--infra). Check then judges
// nothing for that setting and reports no live-check-failed.
var ErrUndecided = errors.New("not decided by the infrastructure files")

// ErrChannelNotFound is wrapped by a Prober's error when the broker
// answered that the subscription's own channel (its SQS queue, its Pub/Sub
// subscription) does not exist: a check made, not one that failed. Check
// then reports nothing for the subscription (no live-check-failed, so the
// lint completes); CheckChannels' missing-destination says what is
// missing when makeChannels validates, and create makes it from the file.
var ErrChannelNotFound = errors.New("does not exist on the broker")

// source names where the settings in force come from, in Check's messages.
type source struct {
	// name is "the broker" or the declaration; on says where ("on the
	// broker", "in aws_sqs_queue.orders"); limit names its limit.
	name, on, limit string
	pos             config.Position
}

var broker = source{name: "the broker", on: "on the broker", limit: "the broker's limit"}

func sourceOf(p Prober, f *config.File, s *config.Subscription) source {
	d, ok := p.(Declarer)
	if !ok {
		return broker
	}
	name, pos, ok := d.Declaration(f, s)
	if !ok {
		return broker
	}
	return source{name: name, on: "in " + name, limit: "the limit in " + name, pos: pos}
}

// at relocates fd to pos (or the source's declaration) when the source
// is a declaration.
func (src source) at(fd lint.Finding, pos config.Position) lint.Finding {
	if src.pos.File == "" {
		return fd
	}
	if !pos.IsValid() {
		pos = src.pos
	}
	return lint.Relocate(fd, pos)
}

// Check probes every subscription of f whose transport has a prober and
// returns the findings: live-check-failed when the probe fails (not when
// the broker answers that the subscription's channel does not exist,
// ErrChannelNotFound: nothing is reported for it then),
// native-limit-drift when the broker's limit differs from the file's, and
// budget-outranked when the budget is at or above the broker's limit
// but not the file's (the file check already reported the other case), and
// budget-cannot-run-down when the broker lacks the native limit a
// CounterProber's delivery count needs, and dead-letter-topic-unsubscribed
// for each dead-letter topic a ReaderProber finds no subscription reads.
// rules supplies the file's answers (lint.TransportRules.NativeLimit).
// A Prober that is a Declarer (--infra) is named in the messages instead of
// the broker, and its findings point at its declaration; a setting it
// leaves undecided (ErrUndecided) is not judged.
func Check(ctx context.Context, f *config.File, probers map[config.Transport]Prober, rules map[config.Transport]lint.TransportRules) []lint.Finding {
	if f == nil {
		return nil
	}
	var out []lint.Finding
	for _, s := range f.Subscriptions {
		p, ok := probers[s.Transport]
		tr := rules[s.Transport]
		if !ok || tr == nil {
			continue
		}
		src := sourceOf(p, f, s)
		fs, failed := checkLimit(ctx, f, s, p, tr, src)
		out = append(out, fs...)
		if failed {
			continue // the broker could not be read: one finding says so
		}
		if sp, ok := p.(SizeProber); ok {
			out = append(out, sizeFindings(ctx, f, s, sp, src)...)
		}
		if rp, ok := p.(ReaderProber); ok {
			out = append(out, unsubscribedFindings(ctx, f, s, rp, src)...)
		}
	}
	lint.Sort(out)
	return out
}

// checkLimit returns the native-limit findings of s: drift, the counter
// a CounterProber needs, budget-outranked; failed is true when the probe
// failed (the one finding is then live-check-failed).
func checkLimit(ctx context.Context, f *config.File, s *config.Subscription, p Prober, tr lint.TransportRules, src source) (out []lint.Finding, failed bool) {
	live, liveOK, err := p.NativeLimit(ctx, f, s)
	if errors.Is(err, ErrUndecided) {
		return nil, false
	}
	if errors.Is(err, ErrChannelNotFound) {
		// A definitive answer, not a failed check: there is nothing to
		// compare (CheckChannels reports the channel missing when
		// makeChannels validates; create makes it from the file).
		return nil, true
	}
	if err != nil {
		return []lint.Finding{checkFailed(s, fmt.Sprintf("subscription %q: could not read its native limit from the broker", s.Name), err)}, true
	}
	file, fileOK := tr.NativeLimit(s)
	field := file.Field
	if field == "" {
		field = live.Field
	}
	switch {
	case fileOK && !liveOK:
		out = append(out, src.at(lint.NewFinding(s, lint.RuleNativeLimitDrift, field,
			fmt.Sprintf("subscription %q: the file sets %s %d but %s has no native limit; apply the file or remove it there", s.Name, file.Field, file.Value, src.name)), live.Pos))
	case !fileOK && liveOK:
		out = append(out, src.at(lint.NewFinding(s, lint.RuleNativeLimitDrift, field,
			fmt.Sprintf("subscription %q: %s has %s %d but the file sets none; add it to the file or remove it %s", s.Name, src.name, live.Field, live.Value, src.on)), live.Pos))
	case fileOK && liveOK && file.Value != live.Value:
		out = append(out, src.at(lint.NewFinding(s, lint.RuleNativeLimitDrift, field,
			fmt.Sprintf("subscription %q: the file sets %s %d but %s has %d; apply the file or change it to %d", s.Name, file.Field, file.Value, src.name, live.Value, live.Value)), live.Pos))
	}
	if cf, ok := counterFinding(p, s, fileOK, liveOK, src); ok {
		out = append(out, src.at(cf, live.Pos))
	}
	r := s.RequeueCount
	if liveOK && r > 0 && r >= live.Value && !(fileOK && r >= file.Value) {
		out = append(out, src.at(lint.NewFinding(s, lint.RuleBudgetOutranked, "requeueCount",
			fmt.Sprintf("subscription %q: requeueCount %d >= %s %d %s: the native limit fires first, so the effective limit is %d; set requeueCount below %d or raise %s above %d",
				s.Name, r, live.Field, live.Value, src.on, live.Value, live.Value, src.limit, r)), live.Pos))
	}
	return out, false
}

// SQSAPI is the part of the SQS client the SQS prober calls.
type SQSAPI interface {
	GetQueueUrl(ctx context.Context, in *awssqs.GetQueueUrlInput, opts ...func(*awssqs.Options)) (*awssqs.GetQueueUrlOutput, error)
	GetQueueAttributes(ctx context.Context, in *awssqs.GetQueueAttributesInput, opts ...func(*awssqs.Options)) (*awssqs.GetQueueAttributesOutput, error)
}

// SQS probes SQS queues: GetQueueUrl for the subscription's queue (named as
// the transport names it, sqs.QueueName), then GetQueueAttributes
// RedrivePolicy. Client returns the client for a file (one per file's
// connections.aws).
type SQS struct {
	Client func(ctx context.Context, f *config.File) (SQSAPI, error)
}

// sqsQueueErr is err of a call about queue name (what: "" or what was
// read, "attributes"), naming the endpoint the call went to (as consume
// names it) unless err already does (a call cut off or refused names it).
func sqsQueueErr(f *config.File, name, what string, err error) error {
	a := f.Connections.AWS
	from := ""
	if a.Endpoint != "" {
		from = "connections.aws.endpoint in the subscriptions file"
	}
	where := sqs.EndpointName("SQS", a.Endpoint, from, a.Region)
	if what != "" {
		what = " " + what
	}
	if strings.Contains(err.Error(), where) {
		return fmt.Errorf("queue %s%s: %w", name, what, err)
	}
	return fmt.Errorf("queue %s%s on %s: %w", name, what, where, err)
}

// NativeLimit returns the queue's RedrivePolicy maxReceiveCount.
func (p SQS) NativeLimit(ctx context.Context, f *config.File, s *config.Subscription) (lint.Limit, bool, error) {
	fifo := s.SQS != nil && s.SQS.QueueType == config.QueueFIFO
	name := sqs.QueueName(s.ChannelName, fifo)
	c, err := p.Client(ctx, f)
	if err != nil {
		return lint.Limit{}, false, fmt.Errorf("queue %s: %w", name, err)
	}
	u, err := c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: &name})
	if err != nil {
		if nq := (*sqstypes.QueueDoesNotExist)(nil); errors.As(err, &nq) {
			return lint.Limit{}, false, fmt.Errorf("%w: %w", ErrChannelNotFound, sqsQueueErr(f, name, "", err))
		}
		return lint.Limit{}, false, sqsQueueErr(f, name, "", err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{
		QueueUrl: u.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameRedrivePolicy},
	})
	if err != nil {
		return lint.Limit{}, false, sqsQueueErr(f, name, "attributes", err)
	}
	raw := attrs.Attributes[string(sqstypes.QueueAttributeNameRedrivePolicy)]
	if raw == "" {
		return lint.Limit{}, false, nil
	}
	m, err := parseRedrive(raw)
	if err != nil {
		return lint.Limit{}, false, fmt.Errorf("queue %s RedrivePolicy %q: %w", name, raw, err)
	}
	return lint.Limit{Value: m, Field: "sqs.redrivePolicy.maxReceiveCount"}, true, nil
}

// parseRedrive reads maxReceiveCount from an SQS RedrivePolicy, which
// carries it as a number or as a string depending on who wrote it.
func parseRedrive(raw string) (int, error) {
	var rp struct {
		MaxReceiveCount json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(raw), &rp); err != nil {
		return 0, fmt.Errorf("not JSON: %w", err)
	}
	v := string(rp.MaxReceiveCount)
	if s, err := strconv.Unquote(v); err == nil {
		v = s
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("maxReceiveCount %s is not an integer", rp.MaxReceiveCount)
	}
	return n, nil
}

// GCP probes Pub/Sub subscriptions with GetSubscription (and their
// dead-letter topics with ListTopicSubscriptions). Client returns the
// client for a project.
type GCP struct {
	Client func(ctx context.Context, f *config.File, project string) (*pubsub.Client, error)
}

// NativeLimit returns the subscription's DeadLetterPolicy
// maxDeliveryAttempts (0 is the service default of 5).
func (p GCP) NativeLimit(ctx context.Context, f *config.File, s *config.Subscription) (lint.Limit, bool, error) {
	project := f.Connections.GCP.ProjectID
	if s.GCP != nil && s.GCP.ProjectID != "" {
		project = s.GCP.ProjectID
	}
	c, err := p.Client(ctx, f, project)
	if err != nil {
		return lint.Limit{}, false, err
	}
	name := fmt.Sprintf("projects/%s/subscriptions/%s", project, s.ChannelName)
	sub, err := c.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: name})
	if err != nil {
		if status.Code(err) == codes.NotFound {
			return lint.Limit{}, false, fmt.Errorf("subscription %s does not exist: %w", name, ErrChannelNotFound)
		}
		return lint.Limit{}, false, fmt.Errorf("subscription %s: %w", name, err)
	}
	dlp := sub.GetDeadLetterPolicy()
	if dlp == nil {
		return lint.Limit{}, false, nil
	}
	m := int(dlp.GetMaxDeliveryAttempts())
	if m == 0 {
		m = 5
	}
	return lint.Limit{Value: m, Field: "gcp.deadLetterPolicy.maxDeliveryAttempts"}, true, nil
}

// ErrMissingChannel is wrapped by a ChannelValidator's error when the broker
// lacks a channel the subscription names (the transport's own sentinel,
// sqs.ErrMissingChannels, gcp.ErrChannelMissing or
// rocketmq.ErrTopicMissing, wrapped with it).
var ErrMissingChannel = errors.New("missing on the broker")

// ChannelValidator looks up on the broker every channel a subscription
// names: the validation `brighter consume` runs at start-up with
// makeChannels: validate (the transport's EnsureChannels in validate
// mode), so that --live and consume agree. It returns nil when
// everything exists, an error wrapping ErrMissingChannel naming what is
// missing, or another error when the broker could not be asked.
type ChannelValidator interface {
	ValidateChannels(ctx context.Context, f *config.File, s *config.Subscription) error
}

// ValidateFunc adapts a function to ChannelValidator.
type ValidateFunc func(ctx context.Context, f *config.File, s *config.Subscription) error

// ValidateChannels calls v.
func (v ValidateFunc) ValidateChannels(ctx context.Context, f *config.File, s *config.Subscription) error {
	return v(ctx, f, s)
}

// CheckChannels validates, with its transport's validator, every
// subscription of f whose makeChannels is validate or assume (create makes
// what is missing), and returns missing-destination (an Error naming the
// subscription and what is missing) or live-check-failed findings.
func CheckChannels(ctx context.Context, f *config.File, validators map[config.Transport]ChannelValidator) []lint.Finding {
	if f == nil {
		return nil
	}
	var out []lint.Finding
	for _, s := range f.Subscriptions {
		v, ok := validators[s.Transport]
		if !ok || s.MakeChannels == config.MakeChannelsCreate || s.MakeChannels == "" {
			continue
		}
		err := v.ValidateChannels(ctx, f, s)
		switch {
		case err == nil:
		case errors.Is(err, ErrMissingChannel):
			out = append(out, lint.NewFinding(s, lint.RuleMissingDestination, "makeChannels",
				fmt.Sprintf("subscription %q: %v; brighter consume with makeChannels: validate refuses to start", s.Name, err)))
		default:
			out = append(out, checkFailed(s, fmt.Sprintf("subscription %q: could not look its channels up on the broker", s.Name), err))
		}
	}
	lint.Sort(out)
	return out
}

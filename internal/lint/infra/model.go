// Package infra is the offline source of `brighter lint --infra`: it reads
// infrastructure-as-code files (Terraform plan JSON and static .tf files,
// CloudFormation templates in JSON and YAML, Kubernetes manifests of Config
// Connector and ACK) into the broker-side settings a subscription runs on:
// queues with their redrive policy and visibility timeout, SNS
// subscriptions, Pub/Sub subscriptions with their dead-letter policy and
// ack deadline, and Pub/Sub topics. Each setting keeps the position it was
// written at, so a finding can point into the infrastructure file.
//
// A value the file does not fix (a Terraform variable without a default, an
// attribute known only after apply, an intrinsic that cannot be resolved
// without deploying) is Unknown, never guessed; a value the file leaves out
// is Unset, and a rule applies the service default for it.
//
// The readers of each format live in sub-packages and produce a Set; this
// package holds the shared model and the lookups that match a resource to a
// subscription by name, ARN or full resource name.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/..., internal/broker/gcp/...,
// internal/broker/rocketmq/..., internal/pump, github.com/spf13/cobra
package infra

import (
	"time"

	"github.com/brightergo/brighter/internal/config"
)

// State says how much a file fixes a setting.
type State int

const (
	// Unset: the file does not write the setting; the service default
	// applies.
	Unset State = iota
	// Known: the file fixes the value.
	Known
	// Unknown: the file writes the setting but its value is decided only
	// at plan or apply time (a variable without a default, a computed
	// attribute, an unresolvable intrinsic). Rules never guess it.
	Unknown
)

// Value is one setting of a resource: its value when Known, and where it
// is written (the attribute's key; the resource's position when Unset).
type Value[T any] struct {
	V     T
	State State
	Pos   config.Position
	// Ref is, for an Unknown value that refers to another declaration of
	// the same files (a Terraform "aws_sqs_queue.dlq.arn", a
	// CloudFormation !GetAtt DLQ.Arn), that declaration's Address, so that
	// a rule can follow it to the resource without guessing its value; ""
	// otherwise. A Config Connector dead-letter topic reference by name to
	// a topic its file does not declare is Known (the name) with Ref kept:
	// a rule follows Ref first, so a declaration elsewhere wins.
	Ref string
}

// IsKnown reports whether the file fixes the value.
func (v Value[T]) IsKnown() bool { return v.State == Known }

// Kind is a resource type brighter reads.
type Kind string

// The resource kinds, named after the broker's own objects.
const (
	// KindSQSQueue is an SQS queue (aws_sqs_queue, AWS::SQS::Queue, ACK Queue).
	KindSQSQueue Kind = "sqs-queue"
	// KindSNSSubscription is an SNS subscription (aws_sns_topic_subscription,
	// AWS::SNS::Subscription).
	KindSNSSubscription Kind = "sns-subscription"
	// KindPubSubSubscription is a Pub/Sub subscription
	// (google_pubsub_subscription, Config Connector PubSubSubscription).
	KindPubSubSubscription Kind = "pubsub-subscription"
	// KindPubSubTopic is a Pub/Sub topic (google_pubsub_topic, Config
	// Connector PubSubTopic).
	KindPubSubTopic Kind = "pubsub-topic"
	// KindSQSQueuePolicy is a queue's redrive or redrive allow policy
	// declared apart from the queue (aws_sqs_queue_redrive_policy,
	// aws_sqs_queue_redrive_allow_policy, which Terraform needs when the
	// two queues refer to each other): Queue names the queue, and Load
	// attaches its Redrive or RedriveAllow to that queue.
	KindSQSQueuePolicy Kind = "sqs-queue-policy"
)

// Resource is one declared broker object. Only the fields of its Kind are
// meaningful; the others stay Unset.
type Resource struct {
	Kind Kind
	// Address names the declaration in its file: a Terraform address
	// ("aws_sqs_queue.orders"), a CloudFormation logical id, or a KRM
	// "Kind/namespace/name".
	Address string
	// Pos is where the declaration starts.
	Pos config.Position
	// Name is the deployed name: the SQS queue name, the Pub/Sub
	// subscription or topic id (not the full resource name).
	Name Value[string]
	// ARN is the queue's or subscription's ARN where the file fixes it
	// (SQS, SNS); Project the Pub/Sub project where it does.
	ARN     Value[string]
	Project Value[string]

	// SQS queue settings.
	FIFO              Value[bool]
	VisibilityTimeout Value[time.Duration]
	MessageRetention  Value[time.Duration]
	// MaxMessageSize is in bytes.
	MaxMessageSize Value[int]
	// Redrive is the queue's or SNS subscription's redrive policy; nil
	// when the file sets none.
	Redrive *Redrive
	// RedriveAllow is the queue's redrive allow policy; nil when the file
	// sets none.
	RedriveAllow *RedriveAllow

	// Queue is, for KindSQSQueuePolicy, the queue's URL or a reference to
	// it.
	Queue Value[string]

	// SNS subscription settings: the topic it subscribes to, its protocol
	// ("sqs") and endpoint (the queue's ARN), and raw message delivery.
	TopicARN           Value[string]
	Protocol           Value[string]
	Endpoint           Value[string]
	RawMessageDelivery Value[bool]

	// Pub/Sub subscription settings. Topic is the topic's id or full
	// resource name as written.
	Topic       Value[string]
	AckDeadline Value[time.Duration]
	Ordering    Value[bool]
	ExactlyOnce Value[bool]
	// RetryPolicy says whether the file declares a retry policy (then
	// RetryMinBackoff and RetryMaxBackoff are its bounds, an Unset one the
	// service default, 10 s and 600 s); without one Pub/Sub redelivers at
	// once.
	RetryPolicy     bool
	RetryMinBackoff Value[time.Duration]
	RetryMaxBackoff Value[time.Duration]
	// DeadLetter is the subscription's dead-letter policy; nil when the
	// file sets none.
	DeadLetter *DeadLetterPolicy
}

// Redrive is an SQS redrive policy: where a message goes after
// MaxReceiveCount receives.
type Redrive struct {
	Pos             config.Position
	TargetARN       Value[string]
	MaxReceiveCount Value[int]
}

// RedriveAllow is an SQS redrive allow policy: which source queues may use
// this queue as their dead-letter queue. Permission is "allowAll",
// "denyAll" or "byQueue" (then SourceARNs lists them).
type RedriveAllow struct {
	Pos        config.Position
	Permission Value[string]
	SourceARNs []Value[string]
}

// DeadLetterPolicy is a Pub/Sub subscription's dead-letter policy. A
// MaxDeliveryAttempts left Unset is the service default, 5.
type DeadLetterPolicy struct {
	Pos                 config.Position
	Topic               Value[string]
	MaxDeliveryAttempts Value[int]
}

// Set is every resource read from the infrastructure files of one lint
// run, in file order.
type Set struct {
	Resources []Resource
	// Files are the paths read, in the order given.
	Files []string
}

// Add appends the resources of one file.
func (s *Set) Add(file string, rs []Resource) {
	s.Files = append(s.Files, file)
	s.Resources = append(s.Resources, rs...)
}

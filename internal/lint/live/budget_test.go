package live_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/lint/infra"
	"github.com/brightergo/brighter/internal/lint/live"
)

// TestBudgetSpan pins the arithmetic of retention-shorter-than-budget: SQS
// and Pub/Sub with no retry policy in force, requeueCount x requeueDelay;
// Pub/Sub with one, requeueCount x (requeueDelay + the policy's maximum
// back-off), the policy being the file's under makeChannels create and the
// declared one otherwise, its maximum taken at the service's 600 s
// default when unset or decided at apply time, and never below its
// minimum.
func TestBudgetSpan(t *testing.T) {
	known := func(d time.Duration) infra.Value[time.Duration] {
		return infra.Value[time.Duration]{V: d, State: infra.Known}
	}
	unknown := infra.Value[time.Duration]{State: infra.Unknown}
	policy := func(mn, mx infra.Value[time.Duration]) *infra.Resource {
		return &infra.Resource{Kind: infra.KindPubSubSubscription, Address: "google_pubsub_subscription.p", RetryPolicy: true, RetryMinBackoff: mn, RetryMaxBackoff: mx}
	}
	none := &infra.Resource{Kind: infra.KindPubSubSubscription, Address: "google_pubsub_subscription.p"}
	queue := &infra.Resource{Kind: infra.KindSQSQueue, Address: "aws_sqs_queue.q"}
	cases := []struct {
		name    string
		yaml    string // the subscription's own lines
		r       *infra.Resource
		span    time.Duration
		backoff time.Duration
		sum     string
	}{
		{"sqs", "transport: sqs\n    requeueDelay: 1m", queue, 5 * time.Minute, 0, "requeueCount 5 x requeueDelay 1m"},
		{"validate, no retry policy", "makeChannels: validate\n    requeueDelay: 1m", none, 5 * time.Minute, 0, "requeueCount 5 x requeueDelay 1m"},
		{"validate, declared 10s..10m", "makeChannels: validate\n    requeueDelay: 1m", policy(known(10*time.Second), known(10*time.Minute)),
			5 * 11 * time.Minute, 10 * time.Minute, "requeueCount 5 x (requeueDelay 1m + the retry policy's maximum back-off 10m, google_pubsub_subscription.p's retry policy)"},
		{"validate, declared 10s..30s", "makeChannels: validate\n    requeueDelay: 10s", policy(known(10*time.Second), known(30*time.Second)), 5 * 40 * time.Second, 30 * time.Second, "requeueCount 5 x (requeueDelay 10s + the retry policy's maximum back-off 30s,"},
		{"validate, maximum below minimum", "makeChannels: assume\n    requeueDelay: 10s", policy(known(2*time.Minute), known(time.Minute)), 5 * 130 * time.Second, 2 * time.Minute, "back-off 2m,"},
		{"validate, maximum unset", "makeChannels: validate\n    requeueDelay: 1m", policy(infra.Value[time.Duration]{}, infra.Value[time.Duration]{}), 5 * 11 * time.Minute, 10 * time.Minute, "the service default)"},
		{"validate, maximum at apply time", "makeChannels: validate\n    requeueDelay: 1m", policy(unknown, unknown), 5 * 11 * time.Minute, 10 * time.Minute, "decided at apply time, taken at the longest)"},
		{"validate, no requeueDelay, declared policy", "makeChannels: validate", policy(known(10*time.Second), known(10*time.Minute)), 5 * 10 * time.Minute, 10 * time.Minute, "requeueCount 5 x (requeueDelay 0s + the retry policy's maximum back-off 10m,"},
		{"create, default maximum", "makeChannels: create\n    requeueDelay: 10s", none, 5 * 610 * time.Second, 10 * time.Minute, "(requeueDelay 10s + the retry policy's maximum back-off 10m, gcp.maxRequeueDelay's default, which makeChannels: create sets)"},
		{"create, maxRequeueDelay 30s", "makeChannels: create\n    requeueDelay: 10s\n    gcp: {maxRequeueDelay: 30s}", policy(known(time.Second), known(10*time.Minute)), 5 * 40 * time.Second, 30 * time.Second, "back-off 30s, gcp.maxRequeueDelay, which makeChannels: create sets)"},
		{"create, no requeueDelay: no policy whatever is declared", "makeChannels: create", policy(known(10*time.Second), known(10*time.Minute)), 0, 0, "requeueCount 5 x requeueDelay 0s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			transport := "transport: gcp\n    "
			if strings.HasPrefix(c.yaml, "transport:") {
				transport = ""
			}
			f := parse(t, fmt.Sprintf(`connections:
  gcp: {projectId: acme-prod}
  aws: {region: us-east-1}
subscriptions:
  - name: sub
    channelName: sub
    requeueCount: 5
    handler: {type: builtin, name: ack}
    %s%s
`, transport, c.yaml))
			span, sum, backoff := live.BudgetSpan(f.Subscriptions[0], c.r)
			if span != c.span || backoff != c.backoff || !strings.Contains(sum, c.sum) {
				t.Errorf("BudgetSpan = %v, %q, back-off %v; want %v, containing %q, back-off %v", span, sum, backoff, c.span, c.sum, c.backoff)
			}
		})
	}
}

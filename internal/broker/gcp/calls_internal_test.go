package gcp

import (
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
)

// TestRPCChannel_NamesTheResourceOfEveryCall: the channel label of a
// counted call is the subscription or topic it addresses, the admin calls'
// included (a topic or subscription created, an IAM policy read), so that
// no series of brighter_broker_calls_total has an empty channel for a call
// that names one.
func TestRPCChannel_NamesTheResourceOfEveryCall(t *testing.T) {
	for _, c := range []struct {
		name string
		req  any
		want string
	}{
		{"Pull", &pubsubpb.PullRequest{Subscription: "projects/p/subscriptions/orders"}, "orders"},
		{"Publish", &pubsubpb.PublishRequest{Topic: "projects/p/topics/orders-t"}, "orders-t"},
		{"CreateTopic", &pubsubpb.Topic{Name: "projects/p/topics/orders-t"}, "orders-t"},
		{"CreateSubscription", &pubsubpb.Subscription{Name: "projects/p/subscriptions/orders", Topic: "projects/p/topics/orders-t"}, "orders"},
		{"GetIamPolicy", &iampb.GetIamPolicyRequest{Resource: "projects/p/topics/orders-dlq"}, "orders-dlq"},
		{"a request naming nothing", &pubsubpb.ListTopicsRequest{}, ""},
	} {
		if got := rpcChannel(c.req); got != c.want {
			t.Errorf("%s: channel %q, want %q", c.name, got, c.want)
		}
	}
}

package broker_test

import (
	"testing"

	"github.com/brightergo/brighter/internal/broker"
)

// TestShortName_KeepsWhatTheSubscriptionsFileNames: a call's channel label
// is the queue, topic or subscription as a subscriptions file names it,
// whatever form the API call carries it in.
func TestShortName_KeepsWhatTheSubscriptionsFileNames(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4566/000000000000/orders":           "orders",
		"https://sqs.eu-west-1.amazonaws.com/123/orders.fifo": "orders.fifo",
		"arn:aws:sns:eu-west-1:123456789012:orders-topic":     "orders-topic",
		"projects/p-1/subscriptions/orders-sub":               "orders-sub",
		"projects/p-1/topics/orders-dlq":                      "orders-dlq",
		"orders":                                              "orders",
		"":                                                    "",
	} {
		if got := broker.ShortName(in); got != want {
			t.Errorf("ShortName(%q) = %q, want %q", in, got, want)
		}
	}
}

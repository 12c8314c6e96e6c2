package rocketmq_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// TestPermanentSendEndsBounded: a rejection whose routed copy the
// broker refuses as it is is classified permanent as on SQS: the broker
// answers ILLEGAL_MESSAGE_PROPERTY_KEY, or MESSAGE_BODY_TOO_LARGE (one more
// try with the rejection message shortened), injected by rmqtest's send
// fault. (TOPIC_NOT_FOUND is not permanent, as AC-18 has it on Pub/Sub.) Then one Error, the message released
// for the longest delay (broker.RoutingRetryMax), not handled again within
// the window and still held by the group (nothing lost). Both variants.
func TestPermanentSendEndsBounded(t *testing.T) {
	cases := []struct {
		name     string
		inject   *rmqtest.StatusError
		tooLarge bool
	}{
		{name: "illegal-property-key", inject: &rmqtest.StatusError{Code: v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, Message: "the property key is illegal"}},
		{name: "body-too-large", inject: &rmqtest.StatusError{Code: v2.Code_MESSAGE_BODY_TOO_LARGE, Message: "message body size exceeds the limit"}, tooLarge: true},
	}
	for _, tc := range cases {
		for _, v := range pumptest.Variants {
			t.Run(tc.name+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, "orders", "orders.dlq")
				e.srv.FailSend(func(topic, id string) error {
					if topic == "orders.dlq" {
						return tc.inject
					}
					return nil
				})
				log, logs := newLogger()
				c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", DeadLetterTopic: "orders.dlq", Logger: log, InvisibleDuration: rmqLease})
				e.send("orders", "p-1")
				var held atomic.Pointer[message.Message]
				opts := pumptest.Options(v, 1)
				opts.RequeueCount = 3
				r := pumptest.Start(t, c, opts, func(_ context.Context, m *message.Message) pump.Result {
					held.Store(m)
					return pump.Result{Outcome: pump.Reject, Reason: strings.Repeat("the downstream service refused it; ", 10)}
				})
				pumptest.WaitUntil(t, 30*time.Second, "the rejection", func() bool { return r.Count(pump.EventRejected) > 0 })
				rej, _ := r.First(pump.EventRejected)
				if !rej.Permanent || !errors.Is(rej.Err, broker.ErrPermanent) || rej.Delay != broker.RoutingRetryMax {
					t.Fatalf("rejected event: permanent %v, delay %s, err %v; want permanent, %s", rej.Permanent, rej.Delay, rej.Err, broker.RoutingRetryMax)
				}
				if got := errors.Is(rej.Err, broker.ErrTooLarge); got != tc.tooLarge {
					t.Fatalf("too large %v, want %v: %v", got, tc.tooLarge, rej.Err)
				}
				sends := e.srv.Calls("SendMessage")
				// Several invisible durations: the released message stays away.
				pumptest.Stays(t, 2*rmqLease, "p-1 came back: handled more than once", func() bool { return r.Handled()["p-1"] == 1 })
				if n := e.srv.Calls("SendMessage"); n != sends {
					t.Fatalf("%d sends during the quiet window, want none", n-sends)
				}
				if !logs.has(slog.LevelError, broker.LogRoutingPermanent) || !strings.Contains(logs.String(), "p-1") {
					t.Fatalf("no Error %q naming p-1 in:\n%s", broker.LogRoutingPermanent, logs)
				}
				if tc.tooLarge && !logs.has(slog.LevelWarn, broker.LogRoutingShortened) {
					t.Fatalf("no Warn %q: the shortened copy was not tried", broker.LogRoutingShortened)
				}
				r.Stop(t)
				if n := len(e.srv.Messages("orders.dlq")); n != 0 {
					t.Fatalf("dead-letter topic holds %d, want 0", n)
				}
				// Nothing lost: the group still holds it; released now, it comes back.
				if err := c.Requeue(e.ctx, held.Load(), 0); err != nil {
					t.Fatalf("release the held message: %v", err)
				}
				m := e.receiveOne(c, 5*time.Second)
				if m.Header.MessageID != "p-1" {
					t.Fatalf("got %s back, want p-1", m.Header.MessageID)
				}
			})
		}
	}
}

// TestRefusedCredentials_FailStartUpAndStallARunningConsumerUntilAccepted:
// RocketMQ refusing the credentials (UNAUTHORIZED) at start-up fails
// NewConsumer with one error wrapping broker.ErrNotAuthorized and naming the
// endpoint; while a consumer runs it is a channel failure wrapping
// broker.ErrNotAuthorized: the pump backs off (a few failures, not a hot loop),
// logs each at Error, reports the channel stalled after StallAfter (readiness
// 503), and recovers when the broker accepts the credentials again, the waiting
// message then handled. Both variants.
func TestRefusedCredentials_FailStartUpAndStallARunningConsumerUntilAccepted(t *testing.T) {
	refused := &rmqtest.StatusError{Code: v2.Code_UNAUTHORIZED, Message: "signature does not match"}
	t.Run("start-up", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "orders")
		e.srv.FailQueryRoute(func(string, string) error { return refused })
		c, err := rocketmq.NewConsumer(e.ctx, rocketmq.ConsumerOptions{Connection: e.conn(), Topic: "orders", ConsumerGroup: "g1"})
		if err == nil {
			_ = c.Close(context.Background())
			t.Fatal("NewConsumer succeeded with refused credentials")
		}
		if !errors.Is(err, broker.ErrNotAuthorized) || !strings.Contains(err.Error(), e.srv.Endpoint()) {
			t.Fatalf("NewConsumer = %v; want ErrNotAuthorized naming %s", err, e.srv.Endpoint())
		}
	})
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "orders")
			log, _ := newLogger()
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", Logger: log, InvisibleDuration: rmqLease})
			e.srv.FailReceive(func(string, string) error { return refused })
			opts := pumptest.Options(v, 1)
			opts.StallAfter = 500 * time.Millisecond
			opts.MaxChannelFailureDelay = 400 * time.Millisecond
			r := pumptest.Start(t, c, opts, func(context.Context, *message.Message) pump.Result { return pump.Result{Outcome: pump.Ack} })
			pumptest.WaitUntil(t, 20*time.Second, "the channel reported stalled", func() bool { return r.Count(pump.EventStalled) > 0 })
			pumptest.NotAuthorizedBackOff(t, r)
			e.srv.FailReceive(nil)
			e.send("orders", "a-1")
			pumptest.WaitUntil(t, 30*time.Second, "recovery and the message acknowledged", func() bool {
				return r.Count(pump.EventChannelRecovered) > 0 && r.Count(pump.EventAcknowledged) > 0
			})
			r.Stop(t)
		})
	}
}

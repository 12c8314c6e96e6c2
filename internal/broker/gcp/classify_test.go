package gcp

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// TestPermanentPublishEndsBounded: a rejection whose routed copy
// Pub/Sub can never accept as it is is classified permanent as on SQS: the
// service refuses it as invalid (InvalidArgument, injected by the
// interceptor: one publish) or as too large (InvalidArgument saying so: a
// second publish with the rejection message shortened). A missing topic
// (NotFound) is not permanent: AC-18 proves it is released and redelivered
// within 10 s. Then one Error, the message released for the longest delay
// (Pub/Sub's 600 s ack deadline), not handled again within the window, and
// still on the subscription (nothing lost). Both variants, pull and stream
// (whose release holds the message, its lease kept, and Nacks it when the
// delay runs out).
func TestPermanentPublishEndsBounded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		inject    error
		publishes int64
		tooLarge  bool
	}{
		{name: "invalid-argument", inject: status.Error(codes.InvalidArgument, "The attribute key 'googclient_x' is reserved."), publishes: 1},
		{name: "invalid-argument-too-large", inject: status.Error(codes.InvalidArgument, "Request payload size exceeds the limit: 10485760 bytes."), publishes: 2, tooLarge: true},
	}
	for _, tc := range cases {
		for _, md := range modes {
			for _, v := range pumptest.Variants {
				t.Run(tc.name+"/"+string(md)+"/"+string(v), func(t *testing.T) {
					t.Parallel()
					e := newEnv(t)
					e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: gcpLease})
					dlq := "orders-dlq"
					e.channels(t, ChannelOptions{Topic: dlq, Subscription: dlq + "-sub", RequeueCount: -1})
					e.faults.FailPublishWith("projects/"+e.project+"/topics/"+dlq, tc.inject)
					c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", BufferSize: 1, AckDeadline: gcpLease, DeadLetterTopic: dlq})
					e.send(t, "orders", newMsg("p-1"))
					before := e.faults.Calls("Publish")
					opts := pumptest.Options(v, 1)
					opts.RequeueCount = 3
					var held atomic.Pointer[message.Message]
					r := pumptest.Start(t, c, opts, func(_ context.Context, m *message.Message) pump.Result {
						held.Store(m)
						return pump.Result{Outcome: pump.Reject, Reason: strings.Repeat("the downstream service refused it; ", 10)}
					})
					pumptest.WaitUntil(t, 30*time.Second, "the rejection", func() bool { return r.Count(pump.EventRejected) > 0 })
					rej, _ := r.First(pump.EventRejected)
					if !rej.Permanent || !errors.Is(rej.Err, broker.ErrPermanent) || rej.Delay != maxAckDeadline {
						t.Fatalf("rejected event: permanent %v, delay %s, err %v; want permanent, %s", rej.Permanent, rej.Delay, rej.Err, maxAckDeadline)
					}
					if got := errors.Is(rej.Err, broker.ErrTooLarge); got != tc.tooLarge {
						t.Fatalf("too large %v, want %v: %v", got, tc.tooLarge, rej.Err)
					}
					if n := e.faults.Calls("Publish") - before; n != tc.publishes {
						t.Fatalf("%d publishes of the copy, want %d", n, tc.publishes)
					}
					// Past the granted ack deadline: the released message must stay away.
					pumptest.Stays(t, e.quietWindow(t, "orders-sub"), "p-1 came back: handled more than once", func() bool { return r.Handled()["p-1"] == 1 })
					if n := e.faults.Calls("Publish") - before; n != tc.publishes {
						t.Fatalf("%d publishes after the quiet window, want %d", n, tc.publishes)
					}
					if recs := e.logs.find(slog.LevelError, broker.LogRoutingPermanent); len(recs) != 1 || attr(recs[0], "message_id") != "p-1" {
						t.Fatalf("%d Errors %q, want one naming p-1", len(recs), broker.LogRoutingPermanent)
					}
					r.Stop(t)
					// Nothing lost: the message is still on the subscription,
					// leased for the longest delay; a nack makes it visible.
					if err := c.Requeue(ctxT(t, 10*time.Second), held.Load(), 0); err != nil {
						t.Fatalf("nack the released message: %v", err)
					}
					if back := receiveOne(t, c, 15*time.Second); back.Header.MessageID != "p-1" {
						t.Fatalf("got %s back, want p-1", back.Header.MessageID)
					}
				})
			}
		}
	}
}

// TestRefusedCredentialsBackOffAndRecover: Pub/Sub refusing the
// credentials while a consumer runs (Unauthenticated on Pull or on opening
// StreamingPull, injected by the interceptors) is a channel failure
// wrapping broker.ErrNotAuthorized: the pump backs off (a growing delay,
// not a hot loop), logs each failure at Error, reports the channel stalled
// after StallAfter (readiness 503), and recovers when the credentials are
// accepted again, the waiting message then handled. Both variants, pull and
// stream.
func TestRefusedCredentialsBackOffAndRecover(t *testing.T) {
	t.Parallel()
	refused := status.Error(codes.Unauthenticated, "Request had invalid authentication credentials.")
	for _, md := range modes {
		for _, v := range pumptest.Variants {
			t.Run(string(md)+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: gcpLease})
				fail := func(err error) {
					if md == modePull {
						e.faults.FailPull(err)
					} else {
						e.faults.FailStreamingPull(err)
					}
				}
				fail(refused)
				c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", BufferSize: 1, AckDeadline: gcpLease})
				opts := pumptest.Options(v, 1)
				opts.StallAfter = 500 * time.Millisecond
				opts.MaxChannelFailureDelay = 400 * time.Millisecond
				r := pumptest.Start(t, c, opts, func(context.Context, *message.Message) pump.Result { return pump.Result{Outcome: pump.Ack} })
				pumptest.WaitUntil(t, 20*time.Second, "the channel reported stalled", func() bool { return r.Count(pump.EventStalled) > 0 })
				pumptest.NotAuthorizedBackOff(t, r)
				fail(nil)
				e.send(t, "orders", newMsg("a-1"))
				pumptest.WaitUntil(t, 30*time.Second, "recovery and the message acknowledged", func() bool {
					return r.Count(pump.EventChannelRecovered) > 0 && r.Count(pump.EventAcknowledged) > 0
				})
				r.Stop(t)
			})
		}
	}
}

// TestProbeRefusedCredentials: the start-up probe of a Pub/Sub
// endpoint that refuses the credentials (Unauthenticated or
// PermissionDenied on GetTopic, injected) fails at once with
// broker.ErrNotAuthorized, which every command reports as one error naming
// the endpoint and exits 1 on; an answer of any other kind (NotFound of the
// probe topic, from the emulator itself) means reachable and authorised.
func TestProbeRefusedCredentials(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := Probe(ctxT(t, 10*time.Second), e.client, e.project, 5*time.Second); err != nil {
		t.Fatalf("Probe on the emulator = %v, want nil", err)
	}
	for _, code := range []codes.Code{codes.Unauthenticated, codes.PermissionDenied} {
		e.faults.FailCall("GetTopic", status.Error(code, "refused"))
		start := time.Now()
		err := Probe(ctxT(t, 10*time.Second), e.client, e.project, 5*time.Second)
		if !errors.Is(err, broker.ErrNotAuthorized) || status.Code(err) != code {
			t.Fatalf("Probe with %s = %v, want ErrNotAuthorized", code, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Probe with %s took %s: a refusal must not be retried", code, d)
		}
	}
	e.faults.FailCall("GetTopic", nil)
}

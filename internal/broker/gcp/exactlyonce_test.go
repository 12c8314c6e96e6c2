package gcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// exactlyOnceSub creates topic and an exactly-once delivery subscription
// of the same name with a 10 s ack deadline (makeChannels has no setting
// for exactly-once; the subscription is made as an operator would).
func (e *env) exactlyOnceSub(t *testing.T, name string) {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	topic := "projects/" + e.project + "/topics/" + name
	if _, err := e.client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	s, err := e.client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: SubscriptionName(e.project, name), Topic: topic,
		AckDeadlineSeconds: 10, EnableExactlyOnceDelivery: true})
	if err != nil {
		t.Fatal(err)
	}
	if !s.GetEnableExactlyOnceDelivery() {
		t.Fatal("the emulator made the subscription without exactly-once delivery")
	}
}

// pullHeld pulls one message of sub as another subscriber would, on its
// own connection to the emulator (past e.faults, so a held Pull of the
// consumer's does not hold it), and leaves it unacknowledged for its ack
// deadline to lapse; it fails the test when none comes within d.
func (e *env) pullHeld(t *testing.T, sub string, d time.Duration) {
	t.Helper()
	emu, err := gcptest.Shared()
	if err != nil {
		t.Fatalf("Pub/Sub emulator: %v", err)
	}
	conn, err := grpc.NewClient(emu.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial the Pub/Sub emulator at %s: %v", emu.Addr, err)
	}
	defer conn.Close()
	other := pubsubpb.NewSubscriberClient(conn)
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		resp, err := other.Pull(ctxT(t, 5*time.Second), &pubsubpb.PullRequest{Subscription: SubscriptionName(e.project, sub), MaxMessages: 1})
		if err != nil {
			t.Errorf("pull %s: %v", sub, err)
			return
		}
		if len(resp.ReceivedMessages) == 1 {
			return
		}
	}
	t.Errorf("nothing handed out again on %s within %v", sub, d)
}

// staleWarned reports an error unless r's log holds a Warn pump.LogStaleSettle
// naming id, and no Error settle failure.
func staleWarned(t *testing.T, r *pumptest.Run, id string) {
	t.Helper()
	logs := r.LogText()
	want := fmt.Sprintf(`"level":"WARN","msg":%q`, pump.LogStaleSettle)
	found := false
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, want) && strings.Contains(line, id) {
			found = true
		}
		if strings.Contains(line, `"level":"ERROR"`) && strings.Contains(line, pump.LogSettleFailed) {
			t.Errorf("a refused acknowledgement was logged as a settle failure, not a stale settle: %s", line)
		}
	}
	if !found {
		t.Errorf("log lacks a WARN %q naming %s:\n%s", pump.LogStaleSettle, id, logs)
	}
}

// On an exactly-once subscription the service refuses an acknowledgement
// whose ack id lapsed (lease extension off, a handler that takes two and a
// half ack deadlines), as Google's emulator does: InvalidArgument with
// EXACTLY_ONCE_ACKID_FAILURE and PERMANENT_FAILURE_INVALID_ACK_ID for the
// ack id. The pull consumer reports it as a stale receipt (ErrAckRefused,
// broker.ErrStaleReceipt), the pump logs it at Warn as a stale settle, not
// as a failed one, counts no acknowledgement for it, and settles the
// message's return without running the handler again, in both variants.
func TestExactlyOnceRefusedAcknowledgementReportedAsStale_Pull(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.exactlyOnceSub(t, "eod")
			c := e.consumer(t, modePull, ConsumerOptions{Subscription: "eod", BufferSize: 1, AckDeadline: 10 * time.Second})
			m := newMsg("eod-1")
			e.send(t, "eod", m)
			opts := pumptest.Options(v, 1)
			opts.MaxLeaseExtension = -1
			r := pumptest.Start(t, c, opts, func(ctx context.Context, _ *message.Message) pump.Result {
				start := time.Now()
				// The service refuses a lapsed ack id once it handed the
				// message out again. Another subscriber takes it (and leaves
				// it to lapse) while the consumer's own Pulls are held: a
				// Proactor's receiver that took it back itself would settle
				// with the fresh ack id, and nothing would be refused.
				e.faults.HoldCalls("Pull")
				pumptest.SleepFor(ctx, 12*time.Second)
				e.pullHeld(t, "eod", 10*time.Second)
				pumptest.SleepFor(ctx, 25*time.Second-time.Since(start))
				e.faults.ReleaseCalls("Pull")
				return pump.Result{Outcome: pump.Ack}
			})
			fail := r.Await(t, pump.EventSettleFailed, 60*time.Second, nil)
			pumptest.WaitUntil(t, 60*time.Second, "the message's return acknowledged", func() bool { return r.Count(pump.EventAcknowledged) > 0 })
			r.Stop(t)
			if !errors.Is(fail.Err, ErrAckRefused) || !errors.Is(fail.Err, broker.ErrStaleReceipt) {
				t.Errorf("settle error %v does not wrap ErrAckRefused and broker.ErrStaleReceipt", fail.Err)
			}
			if n := r.Handled()[m.Header.MessageID]; n != 1 {
				t.Errorf("handled %d times, want once", n)
			}
			if n := r.Count(pump.EventAcknowledged); n != 1 {
				t.Errorf("acknowledged = %d, want 1 (the return's, never the refused one)", n)
			}
			staleWarned(t, r, m.Header.MessageID)
		})
	}
}

// On an exactly-once subscription the streaming client resolves an
// acknowledgement's result with the service's answer; one refused as a
// lapsed ack id is refused (AcknowledgeStatusInvalidAckID) and the stream
// consumer reports it as a stale receipt (ErrAckRefused), which the pump
// logs at Warn as a stale settle and never counts as acknowledged, in both
// variants. The refusal is injected (gcptest.Faults.RefuseAcknowledge, the
// answer the emulator gives a lapsed ack id), since a stream lapses an ack
// id only after the client's MaxExtension.
func TestExactlyOnceRefusedAcknowledgementReportedAsStale_Stream(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.exactlyOnceSub(t, "eod")
			c := e.consumer(t, modeStream, ConsumerOptions{Subscription: "eod", BufferSize: 1, AckDeadline: 10 * time.Second})
			m := newMsg("eod-1")
			e.send(t, "eod", m)
			e.faults.RefuseAcknowledge(true)
			r := pumptest.Start(t, c, pumptest.Options(v, 1), func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: pump.Ack}
			})
			fail := r.Await(t, pump.EventSettleFailed, 60*time.Second, nil)
			r.Stop(t)
			if !errors.Is(fail.Err, ErrAckRefused) || !errors.Is(fail.Err, broker.ErrStaleReceipt) {
				t.Errorf("settle error %v does not wrap ErrAckRefused and broker.ErrStaleReceipt", fail.Err)
			}
			if n := r.Count(pump.EventAcknowledged); n != 0 {
				t.Errorf("acknowledged = %d, want 0 (every acknowledgement was refused)", n)
			}
			staleWarned(t, r, m.Header.MessageID)
		})
	}
}

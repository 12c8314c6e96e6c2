package gcp

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// forModes runs f once per consumer (pull, stream), in parallel, each on its
// own emulator.
func forModes(t *testing.T, f func(t *testing.T, md mode, e *env)) {
	t.Helper()
	t.Parallel()
	for _, md := range modes {
		t.Run(string(md), func(t *testing.T) {
			t.Parallel()
			f(t, md, newEnv(t))
		})
	}
}

func dlp(topic string) *DeadLetterPolicy {
	return &DeadLetterPolicy{Topic: topic, MaxDeliveryAttempts: 5}
}

// TestDeliveryCount_WithDeadLetterPolicy_R1_R2 (both consumers): a fresh
// message presents 0, then one more on each requeue (delivery_attempt - 1).
func TestDeliveryCount_WithDeadLetterPolicy_R1_R2(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: 3, DeadLetterPolicy: dlp("orders.native")})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub"})
		e.send(t, "orders", newMsg("m-1"))
		for want := 0; want < 3; want++ {
			m := receiveOne(t, c, 10*time.Second)
			if m.Header.HandledCount != want || m.DeliveryAttempt != want+1 {
				t.Fatalf("delivery %d presents count %d attempt %d, want %d and %d", want+1, m.Header.HandledCount, m.DeliveryAttempt, want, want+1)
			}
			if want < 2 {
				if err := c.Requeue(ctxT(t, 5*time.Second), m, 0); err != nil {
					t.Fatal(err)
				}
			} else if err := c.Acknowledge(ctxT(t, 5*time.Second), m); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(e.logs.find(slog.LevelWarn, LogBudgetInert)); n != 0 {
			t.Errorf("%d R-11 warnings with a DeadLetterPolicy, want 0", n)
		}
	})
}

// TestRequeue_NoDeadLetterPolicy_AC11_AC29 (both consumers): without a
// DeadLetterPolicy requeue redelivers with count 0 (delivery_attempt unset),
// and R-11's Warning was logged exactly once, at channel creation, never per
// message, after 100 messages went through the channel (AC-29).
func TestRequeue_NoDeadLetterPolicy_AC11_AC29(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: 3})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub"})
		e.send(t, "orders", newMsg("m-1"))
		for i := 0; i < 3; i++ {
			m := receiveOne(t, c, 10*time.Second)
			if m.Header.HandledCount != 0 || m.DeliveryAttempt != 0 {
				t.Fatalf("delivery %d presents %d (attempt %d), want 0 (0)", i+1, m.Header.HandledCount, m.DeliveryAttempt)
			}
			if err := c.Requeue(ctxT(t, 5*time.Second), m, 0); err != nil {
				t.Fatal(err)
			}
		}
		// AC-29: 100 messages through the channel, still one Warning.
		for i := 2; i <= 100; i++ {
			e.send(t, "orders", newMsg(fmt.Sprintf("m-%d", i)))
		}
		deadline := time.Now().Add(30 * time.Second)
		for acked := 0; acked < 100; {
			if time.Now().After(deadline) {
				t.Fatalf("only %d of 100 messages received", acked)
			}
			ms, err := c.Receive(ctxT(t, 5*time.Second), 500*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if err := c.Acknowledge(ctxT(t, 5*time.Second), m); err != nil {
					t.Fatal(err)
				}
				acked++
			}
		}
		ws := e.logs.find(slog.LevelWarn, LogBudgetInert)
		if len(ws) != 1 || attr(ws[0], "requeue_count") != "3" || !strings.HasSuffix(attr(ws[0], "subscription"), "/subscriptions/orders-sub") {
			t.Fatalf("R-11 warnings: %d (%v), want exactly one naming subscription and budget", len(ws), ws)
		}
	})
}

func hasAttrs(t *testing.T, pm *pubsubpb.PubsubMessage, want map[string]string, absent ...string) {
	t.Helper()
	for k, v := range want {
		got, ok := pm.Attributes[k]
		if !ok || (v != "*" && got != v) {
			t.Errorf("attribute %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	for _, k := range absent {
		if _, ok := pm.Attributes[k]; ok {
			t.Errorf("attribute %s present, want absent", k)
		}
	}
}

// TestReject_RoutesByReasonWithMetadata_AC15_R18 (both consumers):
// Unacceptable goes to the invalid topic, DeliveryError and None to the DLQ
// topic, each with the rejection keys and no ack id; the source is empty
// afterwards; a read of the DLQ presents the stamped count.
func TestReject_RoutesByReasonWithMetadata_AC15_R18(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: 3, DeadLetterPolicy: dlp("orders.native"),
			DeadLetterTopic: "orders.DLQ", InvalidTopic: "orders.Invalid"})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", DeadLetterTopic: "orders.DLQ", InvalidTopic: "orders.Invalid"})
		cases := []struct {
			id    string
			rej   message.Rejection
			dest  string
			route broker.Route
		}{
			{"bad", message.Rejection{Reason: message.ReasonUnacceptable, Description: "bad payload"}, "orders.Invalid", broker.RouteInvalidMessage},
			{"spent", message.Rejection{Reason: message.ReasonDeliveryError, Description: "budget spent"}, "orders.DLQ", broker.RouteDeadLetter},
			{"none", message.Rejection{Reason: message.ReasonNone}, "orders.DLQ", broker.RouteDeadLetter},
		}
		for _, tc := range cases {
			e.send(t, "orders", newMsg(tc.id))
			m := receiveOne(t, c, 10*time.Second)
			if tc.id == "spent" { // advance the count to 1 before rejecting
				if err := c.Requeue(ctxT(t, 5*time.Second), m, 0); err != nil {
					t.Fatal(err)
				}
				m = receiveOne(t, c, 10*time.Second)
			}
			stamped := m.Header.HandledCount
			res := c.Reject(ctxT(t, 10*time.Second), m, tc.rej)
			if res.Err != nil || res.Released || res.Route != tc.route || res.Destination != tc.dest {
				t.Fatalf("%s: reject result %+v", tc.id, res)
			}
			pm := e.pullRaw(t, tc.dest, 10*time.Second)
			want := map[string]string{"originalTopic": "orders", "originalMessageType": "MT_COMMAND", "rejectionReason": tc.rej.Reason.String(),
				"rejectionTimestamp": "*", AttrID: tc.id, AttrTopic: tc.dest}
			var absent = []string{ReceiptHandleKey}
			if tc.rej.Description != "" {
				want["rejectionMessage"] = tc.rej.Description
			} else {
				absent = append(absent, "rejectionMessage")
			}
			hasAttrs(t, pm, want, absent...)
			if _, ok := message.ParseWireTime(pm.Attributes["rejectionTimestamp"]); !ok {
				t.Errorf("rejectionTimestamp %q is not ISO-8601", pm.Attributes["rejectionTimestamp"])
			}
			got, err := Decode(Wire{ID: pm.MessageId, Data: pm.Data, Attributes: pm.Attributes}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			present(got, ptr(7)) // however often the DLQ copy is re-read
			if got.Header.HandledCount != stamped {
				t.Errorf("%s: DLQ copy presents %d, want the stamped %d (R-28)", tc.id, got.Header.HandledCount, stamped)
			}
		}
		expectNone(t, c, 1500*time.Millisecond)
	})
}

// TestReject_UnacceptableFallsBackToDeadLetter_AC16 (both consumers).
func TestReject_UnacceptableFallsBackToDeadLetter_AC16(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, DeadLetterTopic: "orders.DLQ"})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", DeadLetterTopic: "orders.DLQ"})
		e.send(t, "orders", newMsg("u-1"))
		res := c.Reject(ctxT(t, 10*time.Second), receiveOne(t, c, 10*time.Second), message.Rejection{Reason: message.ReasonUnacceptable})
		if res.Route != broker.RouteDeadLetter || res.Err != nil {
			t.Fatalf("result %+v", res)
		}
		hasAttrs(t, e.pullRaw(t, "orders.DLQ", 10*time.Second), map[string]string{"rejectionReason": "Unacceptable", AttrID: "u-1"})
	})
}

// TestReject_NoDestinationAcksWithWarning_AC17 (both consumers).
func TestReject_NoDestinationAcksWithWarning_AC17(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub"})
		e.send(t, "orders", newMsg("n-1"))
		res := c.Reject(ctxT(t, 10*time.Second), receiveOne(t, c, 10*time.Second), message.Rejection{Reason: message.ReasonUnacceptable, Description: "bad payload"})
		if res.Route != broker.RouteNone || res.Err != nil {
			t.Fatalf("result %+v", res)
		}
		ws := e.logs.find(slog.LevelWarn, broker.LogDiscarded)
		if len(ws) != 1 || attr(ws[0], "message_id") != "n-1" || attr(ws[0], "reason") != "Unacceptable" {
			t.Fatalf("discard warnings %d, want one naming n-1 and Unacceptable", len(ws))
		}
		expectNone(t, c, 1500*time.Millisecond)
	})
}

// TestReject_FailedPublishReleases_R19 (both consumers): an injected publish
// failure on the DLQ topic logs an Error naming the id and reason, releases
// the message (not acked) and it is redelivered well before its 60 s ack
// deadline.
func TestReject_FailedPublishReleases_R19(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: 60 * time.Second, DeadLetterTopic: "orders.DLQ"})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", DeadLetterTopic: "orders.DLQ"})
		e.faults.FailPublishTo(topicName(e.project, "orders.DLQ"))
		e.send(t, "orders", newMsg("f-1"))
		start := time.Now()
		res := c.Reject(ctxT(t, 10*time.Second), receiveOne(t, c, 10*time.Second), message.Rejection{Reason: message.ReasonDeliveryError})
		if !res.Released || res.Err == nil {
			t.Fatalf("result %+v, want released with an error", res)
		}
		es := e.logs.find(slog.LevelError, broker.LogRoutingFailed)
		if len(es) != 1 || attr(es[0], "message_id") != "f-1" || attr(es[0], "reason") != "DeliveryError" {
			t.Fatalf("routing-failed errors: %d", len(es))
		}
		again := receiveOne(t, c, 10*time.Second)
		if again.Header.MessageID != "f-1" || time.Since(start) > 10*time.Second {
			t.Fatalf("redelivered %s after %v", again.Header.MessageID, time.Since(start))
		}
		// the next routing of the same message works once the fault is gone
		e.faults.FailPublishTo("")
		if res := c.Reject(ctxT(t, 10*time.Second), again, message.Rejection{Reason: message.ReasonDeliveryError}); res.Err != nil || res.Released {
			t.Fatalf("second reject %+v", res)
		}
		e.pullRaw(t, "orders.DLQ", 10*time.Second)
	})
}

// TestReject_MissingTopicAssume_AC18 (both consumers): the routing topic does
// not exist and nothing creates it: Error naming id and DeliveryError,
// released, delivered again within W = 10 s (ack deadline 60 s), topic still
// absent.
func TestReject_MissingTopicAssume_AC18(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: 60 * time.Second})
		if err := NewChannels(e.client, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, DeadLetterTopic: "orders.missing", MakeChannels: broker.MakeAssume, Logger: e.log}).EnsureChannels(ctxT(t, 5*time.Second)); err != nil {
			t.Fatal(err)
		}
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", DeadLetterTopic: "orders.missing"})
		e.send(t, "orders", newMsg("a-1"))
		m := receiveOne(t, c, 10*time.Second)
		rejected := time.Now()
		res := c.Reject(ctxT(t, 10*time.Second), m, message.Rejection{Reason: message.ReasonDeliveryError, Description: "budget spent"})
		if !res.Released || res.Err == nil {
			t.Fatalf("result %+v", res)
		}
		es := e.logs.find(slog.LevelError, broker.LogRoutingFailed)
		if len(es) != 1 || attr(es[0], "message_id") != "a-1" || attr(es[0], "reason") != "DeliveryError" {
			t.Fatalf("routing-failed errors: %d", len(es))
		}
		if again := receiveOne(t, c, 10*time.Second); again.Header.MessageID != "a-1" || time.Since(rejected) > 10*time.Second {
			t.Fatalf("redelivery %s after %v", again.Header.MessageID, time.Since(rejected))
		}
		if e.topicExists(t, "orders.missing") {
			t.Fatal("routing topic exists afterwards")
		}
	})
}

// TestReject_FailedAckAfterPublish_R16 (pull only: the stream ack is local):
// the copy is on the DLQ, an Error is logged, the message is reported settled
// and the consumer keeps going.
func TestReject_FailedAckAfterPublish_R16(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, DeadLetterTopic: "orders.DLQ"})
	c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub", DeadLetterTopic: "orders.DLQ"})
	e.send(t, "orders", newMsg("k-1"))
	m := receiveOne(t, c, 10*time.Second)
	e.faults.FailAcknowledge(true)
	res := c.Reject(ctxT(t, 10*time.Second), m, message.Rejection{Reason: message.ReasonDeliveryError})
	e.faults.FailAcknowledge(false)
	if res.Err == nil || res.Released || res.Route != broker.RouteDeadLetter {
		t.Fatalf("result %+v", res)
	}
	if es := e.logs.find(slog.LevelError, broker.LogAckAfterRouteFail); len(es) != 1 || attr(es[0], "message_id") != "k-1" {
		t.Fatalf("ack-after-route errors: %d", len(es))
	}
	hasAttrs(t, e.pullRaw(t, "orders.DLQ", 10*time.Second), map[string]string{AttrID: "k-1", "rejectionReason": "DeliveryError"})
	e.send(t, "orders", newMsg("k-2"))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) { // k-1 may come back when its deadline lapses; k-2 must arrive
		if m := receiveOne(t, c, 10*time.Second); m.Header.MessageID == "k-2" {
			return
		}
	}
	t.Fatal("consumer did not go on to k-2")
}

// TestReject_FailedReleaseLogged_R19 (pull only): publish and release both
// fail: Error, settled, no panic.
func TestReject_FailedReleaseLogged_R19(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, DeadLetterTopic: "orders.DLQ"})
	c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub", DeadLetterTopic: "orders.DLQ"})
	e.send(t, "orders", newMsg("r-1"))
	m := receiveOne(t, c, 10*time.Second)
	e.faults.FailPublishTo(topicName(e.project, "orders.DLQ"))
	e.faults.FailModifyAckDeadline(true)
	res := c.Reject(ctxT(t, 10*time.Second), m, message.Rejection{Reason: message.ReasonDeliveryError})
	if !res.Released || res.Err == nil {
		t.Fatalf("result %+v", res)
	}
	if es := e.logs.find(slog.LevelError, broker.LogReleaseFailed); len(es) != 1 || attr(es[0], "message_id") != "r-1" {
		t.Fatalf("release-failed errors: %d", len(es))
	}
}

// TestReceive_UndecodableIsUnacceptable (both consumers): a message with a bad
// HandledCount is presented as MT_UNACCEPTABLE with its receipt, and rejecting
// it routes it to the invalid topic, whose copy records the type the message
// carried as originalMessageType, so an operator sees what was sent:
// MT_COMMAND, not MT_UNACCEPTABLE.
func TestReceive_UndecodableIsUnacceptable(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, InvalidTopic: "orders.Invalid"})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", InvalidTopic: "orders.Invalid"})
		_, err := e.client.TopicAdminClient.Publish(ctxT(t, 5*time.Second), &pubsubpb.PublishRequest{Topic: topicName(e.project, "orders"),
			Messages: []*pubsubpb.PubsubMessage{{Data: []byte("x"), Attributes: map[string]string{AttrID: "bad-1", AttrHandledCount: "lots", AttrMessageType: "MT_COMMAND"}}}})
		if err != nil {
			t.Fatal(err)
		}
		m := receiveOne(t, c, 10*time.Second)
		if m.Header.MessageType != message.MTUnacceptable || m.Receipt == nil || m.Header.MessageID != "bad-1" {
			t.Fatalf("got %+v", m.Header)
		}
		if len(e.logs.find(slog.LevelWarn, LogUndecodable)) != 1 {
			t.Error("no undecodable warning")
		}
		if res := c.Reject(ctxT(t, 10*time.Second), m, message.Rejection{Reason: message.ReasonUnacceptable}); res.Route != broker.RouteInvalidMessage || res.Err != nil {
			t.Fatalf("reject %+v", res)
		}
		hasAttrs(t, e.pullRaw(t, "orders.Invalid", 10*time.Second), map[string]string{AttrID: "bad-1", "originalMessageType": "MT_COMMAND"})
	})
}

// TestOrdering_PerKeyOrder (both consumers, ordering subscription): messages
// of one ordering key arrive in publish order.
func TestOrdering_PerKeyOrder(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, EnableMessageOrdering: true})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", BufferSize: 1})
		for i := 1; i <= 3; i++ {
			for _, k := range []string{"k1", "k2"} {
				m := newMsg(k + "-" + string(rune('0'+i)))
				m.Header.PartitionKey = k
				e.send(t, "orders", m)
			}
		}
		got := map[string][]string{}
		for n := 0; n < 6; n++ {
			m := receiveOne(t, c, 10*time.Second)
			got[m.Header.PartitionKey] = append(got[m.Header.PartitionKey], m.Header.MessageID)
			if err := c.Acknowledge(ctxT(t, 5*time.Second), m); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range []string{"k1", "k2"} {
			if strings.Join(got[k], ",") != k+"-1,"+k+"-2,"+k+"-3" {
				t.Errorf("key %s order %v", k, got[k])
			}
		}
	})
}

// TestLeaseLapse_CountAdvances_AC42 (both consumers): with a DeadLetterPolicy
// and no settling call, the redelivery after a lease lapse presents a
// strictly greater count. Pull: ack deadline 1 s (pull never extends).
// Stream: MaxExtension 1 s; the emulator redelivers after the stream's 10 s
// ack deadline.
func TestLeaseLapse_CountAdvances_AC42(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: 3, AckDeadline: time.Second, DeadLetterPolicy: dlp("orders.native")})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", MaxExtension: time.Second})
		e.send(t, "orders", newMsg("l-1"))
		first := receiveOne(t, c, 10*time.Second)
		second := receiveOne(t, c, 20*time.Second)
		if second.Header.MessageID != "l-1" || second.Header.HandledCount <= first.Header.HandledCount {
			t.Fatalf("first %d, second %d: want strictly greater", first.Header.HandledCount, second.Header.HandledCount)
		}
		if err := c.Acknowledge(ctxT(t, 5*time.Second), second); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRequeue_DelayIsReal (both consumers, Google's emulator): a
// requeue with a delay of 3 s on a subscription whose RetryPolicy's minimum
// back-off is that delay (requeueDelay) is not delivered again before the
// delay, allowing the emulator 0.5 s of granularity. Pull: ModifyAckDeadline
// of the delay; stream: held for the delay, then Nacked (ADR 0002 §3).
func TestRequeue_DelayIsReal(t *testing.T) {
	const delay = 3 * time.Second
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, RequeueDelay: delay})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub"})
		e.send(t, "orders", newMsg("d-1"))
		m := receiveOne(t, c, 10*time.Second)
		requeued := time.Now()
		if err := c.Requeue(ctxT(t, 5*time.Second), m, delay); err != nil {
			t.Fatal(err)
		}
		again := receiveOne(t, c, delay+30*time.Second)
		took := time.Since(requeued)
		if again.Header.MessageID != "d-1" {
			t.Fatalf("redelivered %s, want d-1", again.Header.MessageID)
		}
		if took < delay-500*time.Millisecond {
			t.Fatalf("redelivered %v after a requeue with delay %v", took, delay)
		}
		t.Logf("%s: redelivered %v after a requeue with delay %v", md, took, delay)
		if err := c.Acknowledge(ctxT(t, 5*time.Second), again); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStreamParksAKeyBehindItsDelayedMessage (Google's emulator,
// stream, ordered subscription): while a message of an ordering key waits
// out a requeue delay inside the stream consumer, the key's later message
// (delivered by the stream meanwhile, or requeued by the pump at once) is
// not handed out; both come back once the delay has run.
func TestStreamParksAKeyBehindItsDelayedMessage(t *testing.T) {
	t.Parallel()
	const delay = 3 * time.Second
	e := newEnv(t)
	e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, EnableMessageOrdering: true})
	c := e.consumer(t, modeStream, ConsumerOptions{Subscription: "orders-sub", BufferSize: 2})
	for _, id := range []string{"k-0", "k-1"} {
		m := newMsg(id)
		m.Header.PartitionKey = "k"
		e.send(t, "orders", m)
	}
	var first, second *message.Message
	deadline := time.Now().Add(30 * time.Second)
	for first == nil && time.Now().Before(deadline) {
		ms, err := c.Receive(ctxT(t, 5*time.Second), 500*time.Millisecond)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		for _, m := range ms {
			switch m.Header.MessageID {
			case "k-0":
				first = m
			case "k-1":
				second = m
			}
		}
	}
	if first == nil {
		t.Fatal("k-0 never arrived")
	}
	requeued := time.Now()
	if err := c.Requeue(ctxT(t, 5*time.Second), first, delay); err != nil {
		t.Fatal(err)
	}
	if second != nil {
		// Handed out with k-0: released at once, as the pump's hold-back does.
		if err := c.Requeue(ctxT(t, 5*time.Second), second, 0); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing of the key before k-0's delay has run (the emulator sends a
	// Nacked or undelivered k-1 within milliseconds otherwise).
	expectNone(t, c, delay-time.Second)
	seen := map[string]bool{}
	deadline = time.Now().Add(30 * time.Second)
	for len(seen) < 2 && time.Now().Before(deadline) {
		ms, err := c.Receive(ctxT(t, 5*time.Second), 500*time.Millisecond)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		for _, m := range ms {
			if took := time.Since(requeued); took < delay-500*time.Millisecond {
				t.Fatalf("%s handed out %v after k-0 was requeued for %v", m.Header.MessageID, took, delay)
			}
			seen[m.Header.MessageID] = true
			if err := c.Acknowledge(ctxT(t, 5*time.Second), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !seen["k-0"] || !seen["k-1"] {
		t.Fatalf("came back: %v, want k-0 and k-1", seen)
	}
}

package gcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

func iamWarnings(t *testing.T, e *env) []slog.Record {
	t.Helper()
	ws := e.logs.find(slog.LevelWarn, LogIAMTolerated)
	for _, w := range ws {
		for _, k := range []string{"helper", "rpc", "resource", "status", "consequence"} {
			if attr(w, k) == "" {
				t.Errorf("warning lacks %s: %s", k, recordText(w))
			}
		}
		if attr(w, "consequence") != ConsequenceDeadLetteringInactive {
			t.Errorf("consequence %q", attr(w, "consequence"))
		}
	}
	return ws
}

// TestEnsureChannels_IAMTolerated_AC20 runs channel creation with a
// DeadLetterPolicy on the emulator, members unset (ambient credentials decide
// the Resource Manager outcome: client construction fails or GetProject is
// refused) and members set (GetIamPolicy is Unimplemented): creation
// succeeds, exactly two Warnings (one per helper), and the channel is usable.
func TestEnsureChannels_IAMTolerated_AC20(t *testing.T) {
	t.Parallel()
	for _, members := range []bool{false, true} {
		name := map[bool]string{false: "members unset", true: "members set"}[members]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := &DeadLetterPolicy{Topic: "orders.native", MaxDeliveryAttempts: 5}
			if members {
				p.PublisherMember, p.SubscriberMember = "serviceAccount:a@b.iam.gserviceaccount.com", "serviceAccount:a@b.iam.gserviceaccount.com"
			}
			err := NewChannels(e.client, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: 3, DeadLetterPolicy: p, Logger: e.log}).EnsureChannels(ctxT(t, 30*time.Second))
			if err != nil {
				t.Fatalf("EnsureChannels: %v", err)
			}
			ws := iamWarnings(t, e)
			if len(ws) != 2 || attr(ws[0], "helper") != HelperDeadLetterPublisher || attr(ws[1], "helper") != HelperSubscriber {
				t.Fatalf("%d IAM warnings, want exactly two, one per helper: %v", len(ws), ws)
			}
			if members {
				for _, w := range ws {
					if attr(w, "rpc") != RPCGetIamPolicy || attr(w, "status") != "Unimplemented" {
						t.Errorf("members set: %s", recordText(w))
					}
				}
			} else {
				for _, w := range ws {
					if r := attr(w, "rpc"); r != RPCGetProject && r != RPCNewProjectsClient {
						t.Errorf("members unset: Resource Manager not the abandoned step: %s", recordText(w))
					}
				}
			}
			if e.logs.countLevel(slog.LevelWarn) != 2 {
				t.Errorf("%d warnings in all, want 2", e.logs.countLevel(slog.LevelWarn))
			}
			sub, err := e.client.SubscriptionAdminClient.GetSubscription(ctxT(t, 5*time.Second), &pubsubpb.GetSubscriptionRequest{Subscription: SubscriptionName(e.project, "orders-sub")})
			if err != nil || sub.DeadLetterPolicy.GetMaxDeliveryAttempts() != 5 || sub.DeadLetterPolicy.GetDeadLetterTopic() != topicName(e.project, "orders.native") {
				t.Fatalf("subscription %v, %v", sub, err)
			}
			c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub"})
			e.send(t, "orders", newMsg("usable"))
			if m := receiveOne(t, c, 10*time.Second); m.Header.MessageID != "usable" {
				t.Fatalf("got %s", m.Header.MessageID)
			}
		})
	}
}

// TestEnsureChannels_NonToleratedPropagates_R20: a ProjectNumber failure
// with any other status fails channel creation.
func TestEnsureChannels_NonToleratedPropagates_R20(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	boom := errors.New("dns: no such host")
	err := NewChannels(e.client, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, DeadLetterPolicy: dlp("orders.native"), Logger: e.log,
		ProjectNumber: func(context.Context, string) (string, error) { return "", boom }}).EnsureChannels(ctxT(t, 10*time.Second))
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), HelperDeadLetterPublisher) {
		t.Fatalf("err = %v", err)
	}
	if n := len(e.logs.find(slog.LevelWarn, LogIAMTolerated)); n != 0 {
		t.Fatalf("%d tolerated warnings", n)
	}
}

// TestEnsureChannels_CreateThenValidate: create makes the subscription with
// ack deadline, ordering, retry policy and the rejection topics with their
// subscriptions; a second create is harmless (update with a mask); validate
// passes; validate of a missing subscription names it.
func TestEnsureChannels_CreateThenValidate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: 20 * time.Second, EnableMessageOrdering: true,
		RequeueDelay: 2 * time.Second, DeadLetterTopic: "orders.DLQ", InvalidTopic: "orders.Invalid"}
	e.channels(t, o)
	e.channels(t, o)
	sub, err := e.client.SubscriptionAdminClient.GetSubscription(ctxT(t, 5*time.Second), &pubsubpb.GetSubscriptionRequest{Subscription: SubscriptionName(e.project, "orders-sub")})
	if err != nil {
		t.Fatal(err)
	}
	if sub.AckDeadlineSeconds != 20 || !sub.EnableMessageOrdering || sub.RetryPolicy.GetMinimumBackoff().AsDuration() != 2*time.Second ||
		sub.RetryPolicy.GetMaximumBackoff().AsDuration() != DefaultMaxRequeueDelay {
		t.Errorf("subscription %v", sub)
	}
	for _, s := range []string{"orders.DLQ", "orders.Invalid"} {
		if _, err := e.client.SubscriptionAdminClient.GetSubscription(ctxT(t, 5*time.Second), &pubsubpb.GetSubscriptionRequest{Subscription: SubscriptionName(e.project, s)}); err != nil {
			t.Errorf("subscription %s: %v", s, err)
		}
	}
	o.MakeChannels = broker.MakeValidate
	if err := NewChannels(e.client, o).EnsureChannels(ctxT(t, 5*time.Second)); err != nil {
		t.Fatalf("validate: %v", err)
	}
	o.Subscription = "absent"
	err = NewChannels(e.client, o).EnsureChannels(ctxT(t, 5*time.Second))
	if !errors.Is(err, ErrChannelMissing) || !strings.Contains(err.Error(), "subscriptions/absent") {
		t.Fatalf("validate missing: %v", err)
	}
	if e.logs.countLevel(slog.LevelWarn) != 0 {
		t.Errorf("warnings with requeueCount -1: %d", e.logs.countLevel(slog.LevelWarn))
	}
}

// TestEnsureChannels_RestartUpdatesOnlyWhatDiffers: a second create
// on unchanged options reads the subscription and makes no update (Google's
// emulator refused the old fixed mask with labels in it); a changed ack
// deadline and RetryPolicy are updated; changed labels, which the emulator
// refuses in a mask, leave a Warning and do not fail the start.
func TestEnsureChannels_RestartUpdatesOnlyWhatDiffers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: 20 * time.Second,
		RequeueDelay: 2 * time.Second, DeadLetterPolicy: &DeadLetterPolicy{Topic: "orders-native", MaxDeliveryAttempts: 5},
		DeadLetterTopic: "orders.DLQ", Labels: map[string]string{"team": "a"}}
	e.channels(t, o)
	e.channels(t, o)
	if n := e.faults.Calls("UpdateSubscription"); n != 0 {
		t.Fatalf("restart on unchanged options made %d UpdateSubscription calls, want 0", n)
	}
	o.AckDeadline, o.RequeueDelay = 30*time.Second, 3*time.Second
	e.channels(t, o)
	sub, err := e.client.SubscriptionAdminClient.GetSubscription(ctxT(t, 5*time.Second), &pubsubpb.GetSubscriptionRequest{Subscription: SubscriptionName(e.project, "orders-sub")})
	if err != nil {
		t.Fatal(err)
	}
	if sub.AckDeadlineSeconds != 30 || sub.RetryPolicy.GetMinimumBackoff().AsDuration() != 3*time.Second || sub.DeadLetterPolicy.GetMaxDeliveryAttempts() != 5 {
		t.Fatalf("after the changed restart: %v", sub)
	}
	if n := e.faults.Calls("UpdateSubscription"); n != 1 {
		t.Fatalf("changed restart made %d UpdateSubscription calls, want 1", n)
	}
	o.Labels = map[string]string{"team": "b"}
	o.AckDeadline = 40 * time.Second
	e.channels(t, o)
	sub, err = e.client.SubscriptionAdminClient.GetSubscription(ctxT(t, 5*time.Second), &pubsubpb.GetSubscriptionRequest{Subscription: SubscriptionName(e.project, "orders-sub")})
	if err != nil {
		t.Fatal(err)
	}
	if sub.AckDeadlineSeconds != 40 {
		t.Fatalf("ack deadline %d after a restart with new labels, want 40", sub.AckDeadlineSeconds)
	}
	if sub.Labels["team"] != "b" && len(e.logs.find(slog.LevelWarn, LogLabelsNotUpdated)) != 1 {
		t.Fatalf("labels %v not updated and no %q Warning", sub.Labels, LogLabelsNotUpdated)
	}
}

// TestProducer_DelayRefused: Pub/Sub has no delayed publish.
func TestProducer_DelayRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := message.New("d", "orders", message.MTEvent, nil)
	m.Header.Delay = time.Second
	if err := NewProducer(e.client, ProducerOptions{}).Send(ctxT(t, 5*time.Second), m); !errors.Is(err, ErrDelayUnsupported) {
		t.Fatalf("err = %v", err)
	}
}

// TestBudgetInert_RetryPolicyAlone_R11 pins the rule R-11 relies on:
// Google documents delivery_attempt only for a subscription with a
// DeadLetterPolicy, so a budget on a subscription with only a RetryPolicy
// (requeueDelay > 0) still gets the Warning, although Google's emulator
// fills delivery_attempt there too (ADR 0002 §5); the emulator's counter is
// logged, never relied on.
func TestBudgetInert_RetryPolicyAlone_R11(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: 3, RequeueDelay: time.Second})
	ws := e.logs.find(slog.LevelWarn, LogBudgetInert)
	if len(ws) != 1 || attr(ws[0], "reason") != ReasonNoDeadLetterPolicy {
		t.Fatalf("R-11 warnings with a RetryPolicy alone: %d, want exactly one with the documented reason", len(ws))
	}
	sub, err := e.client.SubscriptionAdminClient.GetSubscription(ctxT(t, 5*time.Second), &pubsubpb.GetSubscriptionRequest{Subscription: SubscriptionName(e.project, "orders-sub")})
	if err != nil || sub.RetryPolicy == nil || sub.DeadLetterPolicy != nil {
		t.Fatalf("subscription %v (%v), want a RetryPolicy and no DeadLetterPolicy", sub, err)
	}
	c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub"})
	e.send(t, "orders", newMsg("r-1"))
	m := receiveOne(t, c, 10*time.Second)
	t.Logf("the emulator's delivery_attempt with a RetryPolicy alone: %d (not relied on)", m.DeliveryAttempt)
	if err := c.Acknowledge(ctxT(t, 5*time.Second), m); err != nil {
		t.Fatal(err)
	}
}

// TestEnsureChannels_IAMWarningSaysWhatToDo: R-20's Warning carries the
// role, and on Google's emulator (OnEmulator) note=NoteIAMOnEmulator, the
// Warning being expected there; elsewhere fix= the gcloud command that
// makes the binding on a real project, naming the resource, the member and
// the role (on the emulator here, standing in for a project that refuses
// GetIamPolicy).
func TestEnsureChannels_IAMWarningSaysWhatToDo(t *testing.T) {
	t.Parallel()
	const member = "serviceAccount:a@b.iam.gserviceaccount.com"
	for _, onEmulator := range []bool{true, false} {
		t.Run(fmt.Sprintf("onEmulator=%v", onEmulator), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := &DeadLetterPolicy{Topic: "orders.native", MaxDeliveryAttempts: 5, PublisherMember: member, SubscriberMember: member}
			err := NewChannels(e.client, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: 3, DeadLetterPolicy: p, Logger: e.log, OnEmulator: onEmulator}).EnsureChannels(ctxT(t, 30*time.Second))
			if err != nil {
				t.Fatalf("EnsureChannels: %v", err)
			}
			ws := iamWarnings(t, e)
			if len(ws) != 2 {
				t.Fatalf("%d IAM warnings, want 2", len(ws))
			}
			wantFix := map[string]string{
				HelperDeadLetterPublisher: "gcloud pubsub topics add-iam-policy-binding orders.native --project " + e.project + " --member " + member + " --role roles/pubsub.publisher",
				HelperSubscriber:          "gcloud pubsub subscriptions add-iam-policy-binding orders-sub --project " + e.project + " --member " + member + " --role roles/pubsub.subscriber",
			}
			for _, w := range ws {
				note, fix := attr(w, "note"), attr(w, "fix")
				if attr(w, "role") == "" {
					t.Errorf("warning lacks the role: %s", recordText(w))
				}
				if onEmulator {
					if note != NoteIAMOnEmulator || fix != "" {
						t.Errorf("on the emulator: note %q, fix %q; want the note alone: %s", note, fix, recordText(w))
					}
					continue
				}
				if note != "" || !strings.HasSuffix(fix, wantFix[attr(w, "helper")]) {
					t.Errorf("off the emulator: note %q, fix %q; want no note and a fix ending %q", note, fix, wantFix[attr(w, "helper")])
				}
			}
		})
	}
}

// TestEnsureChannels_IAMFixNamesTheDerivedServiceAgent: with the members
// unset and the project number found, the fix of a refused GetIamPolicy
// names the project's Pub/Sub service agent by its number.
func TestEnsureChannels_IAMFixNamesTheDerivedServiceAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := &DeadLetterPolicy{Topic: "orders.native", MaxDeliveryAttempts: 5}
	err := NewChannels(e.client, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: 3, DeadLetterPolicy: p, Logger: e.log,
		ProjectNumber: func(context.Context, string) (string, error) { return "4242", nil }}).EnsureChannels(ctxT(t, 30*time.Second))
	if err != nil {
		t.Fatalf("EnsureChannels: %v", err)
	}
	ws := iamWarnings(t, e)
	if len(ws) != 2 {
		t.Fatalf("%d IAM warnings, want 2", len(ws))
	}
	for _, w := range ws {
		if fix := attr(w, "fix"); !strings.Contains(fix, "--member serviceAccount:service-4242@gcp-sa-pubsub.iam.gserviceaccount.com --role ") {
			t.Errorf("fix %q does not name the derived service agent", fix)
		}
	}
}

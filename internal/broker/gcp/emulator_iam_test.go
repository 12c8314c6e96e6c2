package gcp

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
)

// TestEnsureChannels_OnEmulatorCallsNoIAMNorResourceManager: on Google's
// emulator (OnEmulator) a native DeadLetterPolicy's two IAM bindings are
// not attempted: with the members unset, the project-number look-up (Cloud
// Resource Manager, Google's real service, which the emulator's settings do
// not redirect) is never called, nor any IAM RPC of the emulator; each
// binding logs R-20's Warning with status=SkippedOnEmulator, the RPC it did
// not make and note=NoteIAMOnEmulator, and the channels are made.
func TestEnsureChannels_OnEmulatorCallsNoIAMNorResourceManager(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var looked atomic.Int32
	p := &DeadLetterPolicy{Topic: "orders.native", MaxDeliveryAttempts: 5}
	err := NewChannels(e.client, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: 3, DeadLetterPolicy: p, Logger: e.log, OnEmulator: true,
		ProjectNumber: func(context.Context, string) (string, error) {
			looked.Add(1)
			return "", &ClientConstructionError{Err: context.Canceled}
		}}).EnsureChannels(ctxT(t, 30*time.Second))
	if err != nil {
		t.Fatalf("EnsureChannels: %v", err)
	}
	if n := looked.Load(); n != 0 {
		t.Errorf("the project number was looked up %d times on the emulator, want none (Resource Manager is Google's real service)", n)
	}
	if n := e.faults.Calls("GetIamPolicy") + e.faults.Calls("SetIamPolicy"); n != 0 {
		t.Errorf("%d IAM calls on the emulator, want none", n)
	}
	ws := iamWarnings(t, e)
	if len(ws) != 2 {
		t.Fatalf("%d IAM warnings, want 2 (one per binding)", len(ws))
	}
	for _, w := range ws {
		if attr(w, "status") != StatusSkippedOnEmulator || attr(w, "rpc") != RPCGetProject || attr(w, "resource") != "projects/"+e.project ||
			attr(w, "note") != NoteIAMOnEmulator || attr(w, "fix") != "" || attr(w, "error") != "" {
			t.Errorf("warning %s: want status=%s rpc=%s resource=projects/%s, the note, no fix and no error", recordText(w), StatusSkippedOnEmulator, RPCGetProject, e.project)
		}
	}
	sub, err := e.client.SubscriptionAdminClient.GetSubscription(ctxT(t, 10*time.Second), &pubsubpb.GetSubscriptionRequest{Subscription: SubscriptionName(e.project, "orders-sub")})
	if err != nil || sub.GetDeadLetterPolicy().GetMaxDeliveryAttempts() != 5 {
		t.Errorf("the subscription was not made with its dead-letter policy: %v %v", sub, err)
	}
}

package rocketmq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
)

// TestGroupSettingsUnansweredEndsAtItsOwnWait: reading a consumer
// group's maximum delivery attempts (lint --live) from a proxy that never answers
// the Settings gives up at GroupSettingsWait with
// ErrGroupSettingsNotReported, though the caller's deadline is much later:
// lint --live does not hang on a proxy that does not say (the test broker
// holding its answer back).
func TestGroupSettingsUnansweredEndsAtItsOwnWait(t *testing.T) {
	e := newEnv(t, "orders")
	ctx, cancel := context.WithTimeout(e.ctx, 4*rocketmq.GroupSettingsWait)
	defer cancel()
	e.srv.HideGroupRetryPolicy(true)
	defer e.srv.HideGroupRetryPolicy(false)
	start := time.Now()
	_, err := rocketmq.GroupMaxDeliveryAttempts(ctx, e.conn(), "g-silent", "orders")
	took := time.Since(start)
	if !errors.Is(err, rocketmq.ErrGroupSettingsNotReported) {
		t.Fatalf("a proxy that does not report: %v, want ErrGroupSettingsNotReported", err)
	}
	if took < rocketmq.GroupSettingsWait-time.Second || took > rocketmq.GroupSettingsWait+3*time.Second {
		t.Errorf("gave up after %v, want about GroupSettingsWait (%s), not the caller's %s", took.Round(time.Millisecond), rocketmq.GroupSettingsWait, 4*rocketmq.GroupSettingsWait)
	}
}

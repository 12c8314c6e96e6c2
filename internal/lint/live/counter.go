package live

import (
	"fmt"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
)

// CounterProber is implemented by a Prober whose transport presents a
// delivery count only while the broker has the native redelivery limit
// configured: Pub/Sub fills delivery_attempt only on a subscription with a
// dead-letter policy. A file that sets the policy passes the file check
// (budget-cannot-run-down, R-11), but a subscription made or changed
// elsewhere (makeChannels validate or assume) may lack it on the broker,
// and then the budget is never reached and a deferred message is
// redelivered for ever.
type CounterProber interface {
	// CountNeedsNativeLimit reports whether the delivery count needs the
	// native limit on the broker.
	CountNeedsNativeLimit() bool
	// MissingCounter says what the broker lacks and how to fix it, for s.
	MissingCounter(s *config.Subscription) (why, fix string)
}

// counterFinding returns the --live budget-cannot-run-down finding for s:
// its budget is on (requeueCount other than -1), the file sets the native
// limit (fileOK; without it the file check already reported the rule) and
// the broker has none (liveOK false), on a transport whose count needs it.
func counterFinding(p Prober, s *config.Subscription, fileOK, liveOK bool, src source) (lint.Finding, bool) {
	cp, ok := p.(CounterProber)
	if !ok || !cp.CountNeedsNativeLimit() || !fileOK || liveOK || s.RequeueCount == -1 {
		return lint.Finding{}, false
	}
	why, fix := cp.MissingCounter(s)
	return lint.NewFinding(s, lint.RuleBudgetCannotRunDown, "requeueCount",
		fmt.Sprintf("subscription %q: requeueCount %d cannot run down %s: %s; %s", s.Name, s.RequeueCount, src.on, why, fix)), true
}

// CountNeedsNativeLimit is true: Pub/Sub's delivery_attempt needs a
// dead-letter policy.
func (GCP) CountNeedsNativeLimit() bool { return true }

// MissingCounter says the broker's subscription has no dead-letter policy.
func (GCP) MissingCounter(s *config.Subscription) (string, string) {
	return fmt.Sprintf("the broker's subscription %s has no dead-letter policy (the file's gcp.deadLetterPolicy is not applied there), so Pub/Sub fills no delivery_attempt and the delivery count never advances: a deferred message is redelivered for ever", s.ChannelName),
		"add the dead-letter policy on the broker (or let brighter make the subscription: makeChannels: create), or set requeueCount: -1"
}

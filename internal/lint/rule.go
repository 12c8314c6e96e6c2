package lint

import (
	"fmt"
	"slices"
	"strings"
)

// Severity ranks a finding. The zero value is SeverityNote; a higher value is
// more severe, so "at or above --fail-on" is a plain comparison.
type Severity int

// The severities, in increasing order. Their names are SARIF's result levels.
const (
	// SeverityNote is advice; it never fails a build unless asked.
	SeverityNote Severity = iota
	// SeverityWarning is a legal setting that probably does not do what its
	// author meant (R-7, R-10, R-11 are Warnings, R-25).
	SeverityWarning
	// SeverityError is a setting the broker or brighter refuses, or one
	// that loses or loops messages.
	SeverityError
)

var severityNames = [...]string{"note", "warning", "error"}

// String returns "note", "warning" or "error".
func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText writes the severity's name, so JSON shows "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseSeverity reads "note", "warning" or "error" (case-insensitive; "info"
// is accepted for note and "warn" for warning). The error lists the valid
// names.
func ParseSeverity(name string) (Severity, error) {
	switch strings.ToLower(name) {
	case "note", "info":
		return SeverityNote, nil
	case "warning", "warn":
		return SeverityWarning, nil
	case "error":
		return SeverityError, nil
	}
	return 0, fmt.Errorf("unknown severity %q; valid values are note, warning, error", name)
}

// Rule is one check: a stable id (used in output, SARIF ruleId and
// `--explain`), the requirement it implements if any, its default severity,
// a one-line summary and a longer explanation.
type Rule struct {
	// ID is stable across releases: kebab-case, e.g. "budget-zero".
	ID string
	// Requirement is the requirement number the rule implements ("R-7"),
	// or "" for an operator rule with none.
	Requirement string
	// Severity is the rule's default severity. A finding that comes from a
	// file the parser refuses is always an Error, whatever the rule says.
	Severity Severity
	// Summary is one line, for SARIF shortDescription and listings.
	Summary string
	// Explanation is the text `brighter lint --explain ID` prints: why it
	// matters, what the broker does, and how to fix it.
	Explanation string
}

// The rule ids. They are part of brighter's interface: CI configurations
// and SARIF baselines refer to them, so they are never renamed.
const (
	RuleConfigInvalid          = "config-invalid"
	RuleBudgetZero             = "budget-zero"
	RuleBudgetOutranked        = "budget-outranked"
	RuleBudgetCannotRunDown    = "budget-cannot-run-down"
	RuleBudgetNoDeadLetter     = "budget-no-dead-letter"
	RuleDeadLetterIsSource     = "dead-letter-is-source"
	RuleBufferSizeRange        = "buffer-size-range"
	RuleGCPMaxDeliveryAttempts = "gcp-max-delivery-attempts-range"
	RuleGCPAckDeadlineRange    = "gcp-ack-deadline-range"
	// RuleGCPRetryPolicyRange is a retry policy makeChannels: create would
	// give a Pub/Sub subscription that Pub/Sub refuses (a back-off above
	// 600s, or a minimum above the maximum), so consume cannot start.
	RuleGCPRetryPolicyRange        = "gcp-retry-policy-range"
	RuleSQSVisibilityTimeoutRange  = "sqs-visibility-timeout-range"
	RuleHandlerTimeoutExceedsLease = "handler-timeout-exceeds-lease"
	RuleLeaseExtensionPastCeiling  = "lease-extension-past-ceiling"
	RuleRocketMQInvisibleDuration  = "rocketmq-invisible-duration-range"
	RuleBufferedWaitExceedsLease   = "buffered-wait-exceeds-lease"
	RuleRequeueDelayExceedsLimit   = "requeue-delay-exceeds-limit"
	// RuleRequeueDelayRange is a requeueDelay the parser refuses (and
	// consume with it): negative, or above SQS's 12h.
	RuleRequeueDelayRange = "requeue-delay-range"
	// RuleHandlerCommandNotFound and RuleMemorySeedInvalid are judged on
	// the local file system (internal/lint/local): what consume refuses to
	// start with.
	RuleHandlerCommandNotFound = "handler-command-not-found"
	RuleMemorySeedInvalid      = "memory-seed-invalid"
	// RuleMemoryOutputUnwritable is judged on the local file system too:
	// a memory transport's output file consume could not write.
	RuleMemoryOutputUnwritable = "memory-output-unwritable"
	// RuleHandlerTLSUnreadable is judged on the local file system too: an
	// http handler's tls files consume could not load.
	RuleHandlerTLSUnreadable    = "handler-tls-unreadable"
	RuleOrderingWithPerformers  = "ordering-with-performers"
	RuleDrainShorterThanHandler = "drain-shorter-than-handler"
	RuleEmptyChannelBusyPoll    = "empty-channel-busy-poll"
	RuleNativeLimitDrift        = "native-limit-drift"
	RuleLiveCheckFailed         = "live-check-failed"
	// RuleMissingDestination is a --live rule: a channel the
	// subscription names is missing on the broker.
	RuleMissingDestination     = "missing-destination"
	RuleDestinationMessageSize = "destination-message-size"
	RuleRoutingNoNativeLimit   = "routing-no-native-limit"
	// RuleConsumesRejectionDestination is a cross-subscription rule
	// (docs/adr/0001-delivery-count-contract.md §9.2): a subscription reads another's rejection destination.
	RuleConsumesRejectionDestination = "consumes-rejection-destination"
	// RuleRejectionCycle is a cross-subscription rule (cycles.go): the
	// rejection destinations of a file's subscriptions form a cycle.
	RuleRejectionCycle = "rejection-cycle"
	// RuleUnboundedRedelivery is requeueCount -1 with no native limit and
	// a handler that can defer: a poison message loops for ever.
	RuleUnboundedRedelivery = "unbounded-redelivery"
	// RuleUnacceptableDiscarded is a subscription with neither an
	// invalid-message nor a dead-letter destination: an
	// unacceptable message is acknowledged and discarded.
	RuleUnacceptableDiscarded = "unacceptable-discarded"
)

// RuleOrderingSpendsBudget is the rule of ordered channels under deferral
// (docs/adr/0006-ordered-channels-under-deferral.md): an ordered channel that
// receives several messages at once keeps a key's order only by releasing
// later messages unhandled, which spends their budget.
const RuleOrderingSpendsBudget = "ordering-spends-budget"

// RuleRequeueDelayLostAtStop is a Pub/Sub stream subscription whose
// requeueDelay is longer than the hold its consumer keeps through a stop:
// at every stop those deferrals come back at once.
const RuleRequeueDelayLostAtStop = "requeue-delay-lost-at-stop"

// RuleRestartsReachNativeLimit is the rule of a native redrive limit above
// requeueCount but within the deliveries the budget forgives to stops and
// kills: the broker's redrive can take a message that stops and crashes
// caught before brighter routes it with its rejection reason.
const RuleRestartsReachNativeLimit = "restarts-reach-native-limit"

// RuleRestartsSpendBudget is the rule of deliveries that stops and kills of
// the consumer waste: a message waiting in the pump's buffer goes back to
// the broker unhandled, and the broker counts that delivery against its
// budget.
const RuleRestartsSpendBudget = "restarts-spend-budget"

// catalogue is every rule, in the order listings show them: the rules of
// the subscriptions file, then those that read the brokers or the
// infrastructure files (rule_broker.go).
var catalogue = slices.Concat(fileRules, brokerRules)

// fileRules are the rules judged on the subscriptions file alone, in
// listing order, family by family: the file's validity (here), the budget
// and where exhausted messages go (rule_budget.go), settings out of range
// (rule_range.go), how long a message is held (rule_timing.go), how the
// pump runs (rule_pump.go), and what consume opens on the local file
// system (rule_local.go).
var fileRules = slices.Concat(validityRules, budgetRules, rangeRules, timingRules, pumpRules, localRules)

// validityRules is the rule of a subscriptions file that is not valid.
var validityRules = []Rule{
	{
		ID: RuleConfigInvalid, Severity: SeverityError,
		Summary: "the subscriptions file is not valid",
		Explanation: `The subscriptions file could not be read as a valid brighter.yaml: a YAML
syntax error, an unknown field, a wrong type, a missing required field or a
value out of range. Each problem is reported at its line and column with the
valid names or values. brighter consume refuses to start on such a file
(exit 2) before any broker call.

Fix: correct the field the finding points at; examples/ holds a valid file
for every transport.`,
	},
}

// Rules returns every rule, in listing order. The slice is a copy.
func Rules() []Rule { return append([]Rule(nil), catalogue...) }

// Lookup finds a rule by its id ("budget-zero") or by the requirement it
// implements ("R-7", case-insensitive).
func Lookup(idOrRequirement string) (Rule, bool) {
	for _, r := range catalogue {
		if r.ID == idOrRequirement || (r.Requirement != "" && strings.EqualFold(r.Requirement, idOrRequirement)) {
			return r, true
		}
	}
	return Rule{}, false
}

// ruleIndex maps an id to its index in catalogue (for SARIF ruleIndex).
var ruleIndex = func() map[string]int {
	m := make(map[string]int, len(catalogue))
	for i, r := range catalogue {
		m[r.ID] = i
	}
	return m
}()

// ruleByID returns the rule with id; ok is false for an unknown id.
func ruleByID(id string) (Rule, bool) {
	i, ok := ruleIndex[id]
	if !ok {
		return Rule{}, false
	}
	return catalogue[i], true
}

package lint

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/redact"
)

// Limit is a transport-native integer setting a rule compares with the
// file's values, e.g. SQS's redrivePolicy.maxReceiveCount.
type Limit struct {
	// Value is the limit in force (a service default already applied: a
	// Pub/Sub maxDeliveryAttempts of 0 is 5).
	Value int
	// Field is its path relative to the subscription, e.g.
	// "sqs.redrivePolicy.maxReceiveCount"; findings point at it and name it.
	Field string
	// Pos is where an infrastructure file declares the limit (--infra);
	// zero when it comes from the subscriptions file or a broker.
	Pos config.Position
}

// Span is a transport-native duration a rule compares with the file's
// values, e.g. SQS's visibilityTimeout.
type Span struct {
	// Value is the duration in force.
	Value time.Duration
	// Field is its path relative to the subscription ("sqs.visibilityTimeout")
	// or, for a fixed service maximum, a short description of it
	// ("Pub/Sub's 600s maximum").
	Field string
}

// TransportRules is what a transport answers about one of its subscriptions.
// Each transport implements it (internal/lint/rules holds the
// implementations); the Linter asks, and never switches on the transport
// itself. Every method must be cheap, pure and safe for concurrent use;
// s is never nil and its transport block is non-nil.
type TransportRules interface {
	// NativeLimit returns the broker's own redelivery limit M in force for s
	// or ok false when there is none.
	NativeLimit(s *config.Subscription) (m Limit, ok bool)
	// BudgetCanRunDown reports whether the delivery count presented for s
	// advances on redelivery, so that a budget can be spent.
	// When it cannot, why says what stops it and fix what to change.
	BudgetCanRunDown(s *config.Subscription) (ok bool, why, fix string)
	// Lease returns how long a received message stays hidden from other
	// consumers (visibility timeout, ack deadline, invisible duration), or
	// ok false when the transport has no such lease.
	Lease(s *config.Subscription) (lease Span, ok bool)
	// MaxRequeueDelay returns the longest requeueDelay the transport can
	// honour for s, a longer one being cut to it (a Warning), or ok false
	// when it has no maximum, or when a longer one is refused and its Check
	// reports it under a rule of its own.
	MaxRequeueDelay(s *config.Subscription) (max Span, ok bool)
	// Ordered reports whether s delivers in order per key (Pub/Sub
	// enableMessageOrdering) in a way a Reactor with several performers
	// breaks; field is the setting that asks for it.
	Ordered(s *config.Subscription) (field string, ok bool)
	// Check returns the findings of the transport's own rules for s (ranges
	// the broker enforces, native destinations equal to the source). Only
	// RuleID, Field (relative to the subscription) and Message need be set;
	// the Linter fills in the rest.
	Check(s *config.Subscription) []Finding
}

// Finding is one problem found: which rule, how severe, where (file, line,
// column) and in which subscription and field, and a one-line message
// naming the subscription, the values and the fix.
type Finding struct {
	// RuleID is a Rule's id, e.g. "budget-zero".
	RuleID string
	// Requirement is the rule's requirement number ("R-7") or "".
	Requirement string
	// Severity is the rule's severity, or Error for a file the parser
	// refuses.
	Severity Severity
	// Pos is where the finding points: the field's key when the file set
	// it, else its nearest ancestor.
	Pos config.Position
	// Subscription is the subscription's name ("" for a file-level finding).
	Subscription string
	// Field is the full YAML path, e.g. "subscriptions[0].requeueCount".
	Field string
	// Message is one line: the subscription, the values and the fix.
	Message string
	// Related is, for a finding that points into an infrastructure file
	// (--infra), the subscription's field in the subscriptions file it
	// concerns; zero otherwise.
	Related config.Position
}

// Relocate returns f pointing at pos, an infrastructure file's setting,
// with the subscription's position it had kept as Related. A pos without a
// line leaves f as it is.
func Relocate(f Finding, pos config.Position) Finding {
	if !pos.IsValid() {
		return f
	}
	f.Related, f.Pos = f.Pos, pos
	return f
}

// Linter runs every rule over subscriptions. The zero value runs the
// transport-independent rules only.
type Linter struct {
	// Transports answers the transport-specific questions; a transport
	// missing from the map gets no transport-specific rule.
	Transports map[config.Transport]TransportRules

	// index is the rejection index of the file SubscriptionIn was last
	// called with, so that calling it for each of a file's n subscriptions
	// costs O(n), not O(n²).
	index atomic.Pointer[rejectionIndex]
}

// New returns a Linter with the given transport rules (the map is used as
// is, not copied).
func New(transports map[config.Transport]TransportRules) *Linter {
	return &Linter{Transports: transports}
}

// File returns the findings of every subscription of f, ordered by
// position then rule id. A nil f yields none.
func (l *Linter) File(f *config.File) []Finding {
	if f == nil {
		return nil
	}
	var out []Finding
	x := newRejectionIndex(f)
	for _, s := range f.Subscriptions {
		out = l.appendSubscription(out, s)
		out = x.appendRejectionConsumers(out, s)
		out = x.appendRejectionCycle(out, s)
	}
	Sort(out)
	return out
}

// SubscriptionIn returns the findings of subscription s of file f: those of
// Subscription plus the rules that compare it with the file's other
// subscriptions (consumes-rejection-destination, rejection-cycle), ordered by position then
// rule id. consume runs it for each subscription it starts: the file's
// destinations are indexed once per file (a file whose subscriptions were
// added to since is indexed again), not once per call. A nil f yields
// Subscription's findings. Safe for concurrent use.
func (l *Linter) SubscriptionIn(f *config.File, s *config.Subscription) []Finding {
	out := l.appendSubscription(nil, s)
	if f != nil {
		x := l.index.Load()
		if !x.of(f) {
			x = newRejectionIndex(f)
			l.index.Store(x)
		}
		out = x.appendRejectionConsumers(out, s)
		out = x.appendRejectionCycle(out, s)
	}
	Sort(out)
	return out
}

// Subscription returns the findings of one subscription, ordered by
// position then rule id.
func (l *Linter) Subscription(s *config.Subscription) []Finding {
	out := l.appendSubscription(nil, s)
	Sort(out)
	return out
}

// Sort orders findings by file, line, column and rule id (stable).
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.RuleID, b.RuleID),
		)
	})
}

// check is one subscription being linted.
type check struct {
	s   *config.Subscription
	out []Finding
}

// add appends a finding of rule at field (relative to the subscription).
// A string argument's %q is redact.Quote: cut at redact.MaxQuoted bytes
// with its length shown.
func (c *check) add(ruleID, field, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = redact.Quoted(s)
		}
	}
	c.out = append(c.out, c.finding(Finding{RuleID: ruleID, Field: field, Message: fmt.Sprintf(format, args...)}))
}

// finding completes f (whose Field is relative) with the rule's severity and
// requirement, the position and the subscription.
func (c *check) finding(f Finding) Finding {
	r, _ := ruleByID(f.RuleID)
	// Values that came from ${VAR} are quoted as written.
	f.Message = c.s.AsWritten(f.Message)
	f.Severity = r.Severity
	f.Requirement = r.Requirement
	f.Pos = c.s.Pos(f.Field)
	if c.s.Merged(f.Field) {
		f.Message += config.MergedNote
	}
	f.Subscription = c.s.Name
	if f.Field == "" {
		f.Field = c.s.Path()
	} else {
		f.Field = c.s.Path() + "." + f.Field
	}
	return f
}

// NewFinding returns a finding of rule on subscription s at field (a path
// relative to s, "" for s itself), with the rule's severity and requirement
// and the field's position; for checks that run outside the Linter, such as
// --live (internal/lint/live).
func NewFinding(s *config.Subscription, ruleID, field, message string) Finding {
	return (&check{s: s}).finding(Finding{RuleID: ruleID, Field: field, Message: message})
}

// pick returns the first of fields the file set, else the first.
func pick(s *config.Subscription, fields ...string) string {
	for _, f := range fields {
		if s.Set(f) {
			return f
		}
	}
	return fields[0]
}

func (l *Linter) appendSubscription(out []Finding, s *config.Subscription) []Finding {
	if s == nil {
		return out
	}
	c := &check{s: s, out: out}
	tr := l.Transports[s.Transport]
	budget := s.RequeueCount != -1
	name := s.Name

	// a budget of 0 or below -1 rejects on the first deferral.
	if s.RequeueCount == 0 || s.RequeueCount < -1 {
		c.add(RuleBudgetZero, "requeueCount",
			"subscription %q: requeueCount %d rejects every message on its first deferral, exactly like 1 (only -1 disables the budget); did you mean -1 (unlimited) or 1 (once only)?",
			name, s.RequeueCount)
	}
	// a budget with nowhere to send the exhausted message.
	if budget && s.DeadLetterRoutingKey == "" {
		c.add(RuleBudgetNoDeadLetter, "requeueCount",
			"subscription %q: requeueCount %d is set but deadLetterRoutingKey is not: a message that exhausts the budget is acknowledged and discarded; set deadLetterRoutingKey, or requeueCount: -1",
			name, s.RequeueCount)
	}
	// an unacceptable message (undecodable, or marked so by the
	// handler) with nowhere to go is acknowledged and discarded. Not on
	// memory, whose messages end with the process anyway.
	if s.DeadLetterRoutingKey == "" && s.InvalidMessageRoutingKey == "" && s.Transport != config.TransportMemory {
		c.add(RuleUnacceptableDiscarded, pick(s, "invalidMessageRoutingKey", "deadLetterRoutingKey"),
			"subscription %q: neither invalidMessageRoutingKey nor deadLetterRoutingKey is set: an unacceptable message (one that cannot be decoded, or that the handler marks unacceptable) is acknowledged and discarded, with only a Warning log line; set invalidMessageRoutingKey (or deadLetterRoutingKey) to keep it",
			name)
	}
	// Destinations equal to the source loop rejected messages.
	for _, d := range []struct{ field, value string }{
		{"deadLetterRoutingKey", s.DeadLetterRoutingKey},
		{"invalidMessageRoutingKey", s.InvalidMessageRoutingKey},
	} {
		if d.value == "" {
			continue
		}
		if src, what := sourceNamed(s, d.value); src {
			c.add(RuleDeadLetterIsSource, d.field,
				"subscription %q: %s %q is the subscription's own %s: rejected messages would come straight back; name a separate destination such as %q",
				name, d.field, d.value, what, s.ChannelName+suffix(d.field))
		}
	}
	// bufferSize 1..10 (the parser refuses others; kept for files built in code).
	if s.BufferSize < 1 || s.BufferSize > config.MaxBufferSize {
		c.add(RuleBufferSizeRange, "bufferSize",
			"subscription %q: bufferSize %d is outside 1..%d; use 1..%d and raise noOfPerformers for more concurrency",
			name, s.BufferSize, config.MaxBufferSize, config.MaxBufferSize)
	}
	// drainTimeout shorter than a handler that may run for handler.timeout.
	timedHandler := s.Handler.Type == config.HandlerExec || s.Handler.Type == config.HandlerHTTP
	if timedHandler && s.DrainTimeout < s.Handler.Timeout {
		c.add(RuleDrainShorterThanHandler, pick(s, "drainTimeout", "handler.timeout"),
			"subscription %q: drainTimeout %s is shorter than handler.timeout %s: a graceful stop may cut a handler off and its message will be handled again; set drainTimeout to at least %s",
			name, config.FormatDuration(s.DrainTimeout), config.FormatDuration(s.Handler.Timeout), config.FormatDuration(s.Handler.Timeout))
	}
	if tr == nil {
		return c.out
	}

	// Stops and kills spend the budget of messages waiting in the buffer;
	// not on memory, whose messages end with the process, nor where the
	// budget cannot run down.
	if ok, _, _ := tr.BudgetCanRunDown(s); ok && s.Transport != config.TransportMemory {
		c.restartsRule(s)
	}
	// the native limit fires first when R >= M.
	if budget && s.RequeueCount > 0 {
		if m, ok := tr.NativeLimit(s); ok && s.RequeueCount >= m.Value {
			c.add(RuleBudgetOutranked, pick(s, "requeueCount", m.Field),
				"subscription %q: requeueCount %d >= %s %d: the native limit fires first, so the effective limit is %d; set requeueCount below %d or raise %s above %d",
				name, s.RequeueCount, m.Field, m.Value, m.Value, m.Value, lastElem(m.Field), s.RequeueCount)
		} else if ok && m.Value < ForgivenDeliveries(s.RequeueCount)+1 {
			// R < M <= 2R: stops and kills can reach M before the
			// budget routes a message (internal/pump's exhausted).
			need := ForgivenDeliveries(s.RequeueCount) + 1
			c.add(RuleRestartsReachNativeLimit, pick(s, m.Field, "requeueCount"),
				"subscription %q: %s %d is above requeueCount %d but below %d (2 x requeueCount + 1): the budget forgives up to %d deliveries that no handler finished (a stop's release, a cut-off handler, a crash, a lapsed lease) and routes such a message with its rejection reason only on delivery %d, so %d stops or crashes that each catch a message move it to the broker's own dead-letter destination first, with no rejection reason; set %s to at least %d",
				name, m.Field, m.Value, s.RequeueCount, need, max(s.RequeueCount, 1), need, m.Value, lastElem(m.Field), need)
		}
	}
	// a routing that keeps failing is ended only by a
	// native limit. The memory transport has none, and needs none: its
	// messages end with the process.
	if s.Transport != config.TransportMemory && (s.DeadLetterRoutingKey != "" || s.InvalidMessageRoutingKey != "") {
		if _, ok := tr.NativeLimit(s); !ok {
			c.add(RuleRoutingNoNativeLimit, pick(s, "deadLetterRoutingKey", "invalidMessageRoutingKey"),
				"subscription %q: no native redrive limit: a message whose rejection cannot be routed is released with a delay growing from 1s to at most 10 minutes and redelivered for ever; give the subscription a native redrive limit above requeueCount as a backstop",
				name)
		}
	}
	// no budget and no native limit, with a handler that can defer:
	// a poison message is redelivered for as long as consume runs. Not
	// on memory, whose messages end with the process.
	if !budget && s.Transport != config.TransportMemory && mayDefer(s.Handler) {
		if _, ok := tr.NativeLimit(s); !ok {
			c.add(RuleUnboundedRedelivery, pick(s, "requeueCount", "handler"),
				"subscription %q: requeueCount -1 (no budget) and no native redelivery limit: a message the handler keeps deferring is redelivered every %s for as long as consume runs, never dead-lettered; set requeueCount (with deadLetterRoutingKey) or a native limit (%s)",
				name, redeliveryEvery(s), nativeLimitField(s.Transport))
		}
	}
	// the budget cannot run down.
	if budget {
		if ok, why, fix := tr.BudgetCanRunDown(s); !ok {
			c.add(RuleBudgetCannotRunDown, "requeueCount",
				"subscription %q: requeueCount %d cannot run down: %s; %s",
				name, s.RequeueCount, why, fix)
		}
	}
	// A receive that returns at once, with no pause after an empty one.
	if sp, ok := tr.(ShortPoller); ok && s.EmptyChannelDelay <= 0 {
		if at, why := sp.ReturnsAtOnce(s); at {
			c.add(RuleEmptyChannelBusyPoll, pick(s, "emptyChannelDelay", "timeOut"),
				"subscription %q: emptyChannelDelay 0s and %s: an empty channel is polled again at once, without a pause, burning a core and (on AWS) billed requests; set timeOut to at least 1s or emptyChannelDelay above 0s (default 500ms)",
				name, why)
		}
	}
	// The handler, or the buffer wait plus the handler, may outlive the
	// lease (leases.go).
	if lease, ok := tr.Lease(s); ok && timedHandler {
		c.leaseRules(tr, s, lease)
	}
	// A lease extension the broker's ceiling cuts short.
	if lease, ok := tr.Lease(s); ok {
		c.ceilingRule(tr, s, lease)
	}
	// requeueDelay beyond what the transport can delay.
	if mx, ok := tr.MaxRequeueDelay(s); ok && s.RequeueDelay > mx.Value {
		c.add(RuleRequeueDelayExceedsLimit, "requeueDelay",
			"subscription %q: requeueDelay %s is longer than %s %s, so a requeued message returns after %s; use at most %s",
			name, config.FormatDuration(s.RequeueDelay), mx.Field, config.FormatDuration(mx.Value), config.FormatDuration(mx.Value), config.FormatDuration(mx.Value))
	}
	// Ordered delivery with a multi-performer Reactor.
	if field, ok := tr.Ordered(s); ok && s.MessagePumpType == config.Reactor && s.NoOfPerformers > 1 {
		c.add(RuleOrderingWithPerformers, pick(s, "noOfPerformers", field),
			"subscription %q: %s with messagePumpType reactor and noOfPerformers %d: performers may handle messages of one ordering key out of order; use noOfPerformers: 1 or messagePumpType: proactor",
			name, field, s.NoOfPerformers)
	}
	for _, f := range tr.Check(s) {
		c.out = append(c.out, c.finding(f))
	}
	return c.out
}

// ForgivenDeliveries is how many deliveries a message of budget
// requeueCount may take before brighter routes it, however few of them a
// handler finished: 2 x max(requeueCount, 1). The pump forgives up to
// max(requeueCount, 1) deliveries that no handler finished (stops, kills,
// lapsed leases) and routes a delivery without a handler run once the
// deliveries before it exceed that by the budget (internal/pump's
// spentByHandlers), so it acts on delivery ForgivenDeliveries + 1; a native
// redrive limit below that can act first.
func ForgivenDeliveries(requeueCount int) int { return 2 * max(requeueCount, 1) }

// mayDefer reports whether handler h can defer a message: every handler
// but the builtins that never do (log, ack, reject, unacceptable), and a
// builtin script only when one of its outcomes can.
func mayDefer(h config.Handler) bool {
	if h.Type != config.HandlerBuiltin {
		return true
	}
	if len(h.Script) > 0 {
		for _, outcome := range h.Script {
			if builtinMayDefer(outcome) {
				return true
			}
		}
		return false
	}
	return builtinMayDefer(h.Name)
}

// builtinMayDefer reports whether the builtin outcome name can defer a
// message (defer, fail: an error is a deferral).
func builtinMayDefer(name string) bool {
	switch name {
	case "log", "ack", "reject", "unacceptable":
		return false
	}
	return true
}

// redeliveryEvery says how often a deferred message of s comes back.
func redeliveryEvery(s *config.Subscription) string {
	if s.RequeueDelay <= 0 {
		return "time it is received (requeueDelay 0s: at once)"
	}
	return config.FormatDuration(s.RequeueDelay) + " (requeueDelay)"
}

// nativeLimitField names the native redelivery limit of transport t.
func nativeLimitField(t config.Transport) string {
	switch t {
	case config.TransportSQS:
		return "sqs.redrivePolicy.maxReceiveCount"
	case config.TransportGCP:
		return "gcp.deadLetterPolicy.maxDeliveryAttempts"
	case config.TransportRocketMQ:
		return "rocketmq.maxDeliveryAttempts"
	}
	return "the broker's redrive limit"
}

func suffix(field string) string {
	if field == "invalidMessageRoutingKey" {
		return "-invalid"
	}
	return "-dlq"
}

// lastElem returns the last element of a dotted path.
func lastElem(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// configRules maps the field a config error concerns (its last path
// elements) to the rule that explains it, for range errors only.
var configRules = []struct{ suffix, rule string }{
	{".bufferSize", RuleBufferSizeRange},
	{".gcp.deadLetterPolicy.maxDeliveryAttempts", RuleGCPMaxDeliveryAttempts},
	{".sqs.visibilityTimeout", RuleSQSVisibilityTimeoutRange},
	{".requeueDelay", RuleRequeueDelayRange},
}

// ConfigFindings turns the error of config.Load or config.Parse into
// findings: each config.Error becomes an Error-severity finding at its
// position, under the rule that explains it (bufferSize out of range is
// buffer-size-range, for example) or config-invalid. ok is false when err
// does not hold config.Errors (an unreadable file, say); the caller then
// reports err itself. A nil err yields nil, true.
func ConfigFindings(err error) (fs []Finding, ok bool) {
	if err == nil {
		return nil, true
	}
	var es config.Errors
	if !errors.As(err, &es) {
		var e *config.Error
		if !errors.As(err, &e) {
			return nil, false
		}
		es = config.Errors{e}
	}
	fs = make([]Finding, 0, len(es))
	for _, e := range es {
		id := RuleConfigInvalid
		if strings.Contains(e.Msg, "out of range") {
			for _, m := range configRules {
				if strings.HasSuffix(e.Field, m.suffix) {
					id = m.rule
					break
				}
			}
		}
		r, _ := ruleByID(id)
		msg := e.Msg
		if e.Field != "" {
			msg = e.Field + ": " + e.Msg
		}
		fs = append(fs, Finding{
			RuleID: id, Requirement: r.Requirement, Severity: SeverityError,
			Pos: e.Pos(), Field: e.Field, Message: msg,
		})
	}
	Sort(fs)
	return fs, true
}

// Source parses a subscriptions file held in data (name as in config.Parse;
// env expands ${VAR}, nil means os.LookupEnv) and lints it: a file the
// parser refuses yields its ConfigFindings, a valid one the rules' findings.
// f is nil when the file does not parse. It never returns an error: every
// problem of the content is a finding.
func (l *Linter) Source(name string, data []byte, env func(string) (string, bool)) (fs []Finding, f *config.File) {
	f, err := config.Parse(name, data, env)
	if err != nil {
		fs, ok := ConfigFindings(err)
		if !ok {
			fs = []Finding{{RuleID: RuleConfigInvalid, Severity: SeverityError,
				Pos: config.Position{File: name, Line: 1, Column: 1}, Message: err.Error()}}
		}
		return fs, nil
	}
	return l.File(f), f
}

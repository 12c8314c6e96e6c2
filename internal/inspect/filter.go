package inspect

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// ReasonNativeRedrive is the reason shown, filtered on and grouped under for
// a message that carries no rejection metadata: the broker's own redrive
// moved it (SQS maxReceiveCount, Pub/Sub maxDeliveryAttempts, RocketMQ
// %DLQ%), which is not an error.
const ReasonNativeRedrive = "NativeRedrive"

// Filter selects messages. The zero value selects every message.
type Filter struct {
	// Reasons are rejection reasons (None, Unacceptable, DeliveryError,
	// NativeRedrive), compared case-insensitively; empty means any.
	Reasons []string
	// Topics are original topics, exact or path.Match globs ("orders-*");
	// empty means any.
	Topics []string
	// Since and Until bound the rejection time (the message timestamp when it
	// carries no rejectionTimestamp): Since inclusive, Until exclusive; zero
	// means unbounded.
	Since, Until time.Time
	// IDs are message ids; empty means any.
	IDs []string
	// Grep matches the rejection message; nil means any.
	Grep *regexp.Regexp
	// GroupIDs are failure group ids (GroupKey.ID, as `dlq stats` shows
	// them, case-insensitive); empty means any.
	GroupIDs []string
	// Limit stops a scan after this many selected messages; 0 means no limit.
	Limit int
}

// Validate returns an error naming the flag for a reason that does not
// exist, a bad glob, a negative limit or Since after Until.
func (f Filter) Validate() error {
	for _, r := range f.Reasons {
		if _, ok := canonicalReason(r); !ok {
			return fmt.Errorf("--reason %q: valid values are %s", redact.Quoted(r), strings.Join(reasonNames(), ", "))
		}
	}
	for _, t := range f.Topics {
		if _, err := path.Match(t, ""); err != nil {
			return fmt.Errorf("--topic %q: %w", redact.Quoted(t), err)
		}
	}
	for _, g := range f.GroupIDs {
		if err := ValidGroupID(g); err != nil {
			return err
		}
	}
	if f.Limit < 0 {
		return fmt.Errorf("--limit %d: must be 0 or more", f.Limit)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return errors.New("--since must be before --until")
	}
	return nil
}

// reasonNames are the names --reason takes: the message package's
// rejection reasons (message.RejectionReasons), then ReasonNativeRedrive.
func reasonNames() []string {
	var names []string
	for r := range message.RejectionReasons() {
		names = append(names, r.String())
	}
	return append(names, ReasonNativeRedrive)
}

// canonicalReason returns a --reason value as Describe names the reason
// (case-insensitive; "native" is ReasonNativeRedrive), or false for a name
// that is no reason. It takes the reasons from message.RejectionReasons,
// so a new reason is known here without a change.
func canonicalReason(s string) (string, bool) {
	for r := range message.RejectionReasons() {
		if name := r.String(); strings.EqualFold(name, s) {
			return name, true
		}
	}
	if strings.EqualFold(s, ReasonNativeRedrive) || strings.EqualFold(s, "native") {
		return ReasonNativeRedrive, true
	}
	return "", false
}

// Match reports whether the message passes every condition of the filter
// (Limit is the scan's business, not Match's).
func (f Filter) Match(m *message.Message) bool {
	d := Describe(m)
	if len(f.Reasons) > 0 && !slices.ContainsFunc(f.Reasons, func(r string) bool {
		c, _ := canonicalReason(r)
		return c == d.Reason
	}) {
		return false
	}
	if len(f.Topics) > 0 && !slices.ContainsFunc(f.Topics, func(t string) bool {
		ok, _ := path.Match(t, d.OriginalTopic)
		return ok
	}) {
		return false
	}
	at := d.RejectedAt
	if at.IsZero() {
		at = m.Header.Timestamp
	}
	if !f.Since.IsZero() && at.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !at.Before(f.Until) {
		return false
	}
	if len(f.IDs) > 0 && !slices.Contains(f.IDs, m.Header.MessageID) {
		return false
	}
	if f.Grep != nil && !f.Grep.MatchString(d.RejectionMessage) {
		return false
	}
	if len(f.GroupIDs) > 0 {
		id := GroupOf(m).ID()
		if !slices.ContainsFunc(f.GroupIDs, func(g string) bool { return strings.EqualFold(g, id) }) {
			return false
		}
	}
	return true
}

// ParseTimeBound reads a --since / --until value: an RFC 3339 time, or a Go
// duration meaning that long before now ("90m", "24h"). It returns an error
// naming the flag otherwise.
func ParseTimeBound(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--%s %q: a duration must be positive (it means that long ago)", flag, redact.Quoted(s))
		}
		return now.Add(-d).UTC(), nil
	}
	if t, ok := message.ParseWireTime(s); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 time (2024-05-01T10:00:00Z) or a duration ago (90m, 24h)", flag, redact.Quoted(s))
}

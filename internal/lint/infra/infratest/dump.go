// Package infratest is test support for the readers of `lint --infra`: it
// flattens a resource into "field: state value @line:col" lines a test can
// compare entry by entry, and drives any reader through the checks every
// reader shares (its corpus files read, hostile and huge files refused
// within bounds, fuzzing).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/pump, github.com/spf13/cobra
package infratest

import (
	"fmt"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
)

// Flatten returns every setting of r by field name ("Name",
// "Redrive.TargetARN", "RedriveAllow.SourceARNs[0]"), each as
// "STATE VALUE @LINE:COL" with " ->REF" when it refers to a resource:
// "known orders @12:7", "unknown @20:7 ->OrdersDLQ", "unset @3:3". A
// value's V is shown only when Known.
func Flatten(r infra.Resource) map[string]string {
	m := map[string]string{"Pos": at(r.Pos), "Kind": string(r.Kind)}
	put(m, "Name", r.Name)
	put(m, "ARN", r.ARN)
	put(m, "Project", r.Project)
	put(m, "FIFO", r.FIFO)
	put(m, "VisibilityTimeout", r.VisibilityTimeout)
	put(m, "MessageRetention", r.MessageRetention)
	put(m, "MaxMessageSize", r.MaxMessageSize)
	put(m, "TopicARN", r.TopicARN)
	put(m, "Protocol", r.Protocol)
	put(m, "Endpoint", r.Endpoint)
	put(m, "RawMessageDelivery", r.RawMessageDelivery)
	put(m, "Topic", r.Topic)
	put(m, "AckDeadline", r.AckDeadline)
	put(m, "Ordering", r.Ordering)
	put(m, "ExactlyOnce", r.ExactlyOnce)
	if r.RetryPolicy {
		m["RetryPolicy"] = "declared"
	}
	put(m, "RetryMinBackoff", r.RetryMinBackoff)
	put(m, "RetryMaxBackoff", r.RetryMaxBackoff)
	if r.Redrive != nil {
		m["Redrive"] = at(r.Redrive.Pos)
		put(m, "Redrive.TargetARN", r.Redrive.TargetARN)
		put(m, "Redrive.MaxReceiveCount", r.Redrive.MaxReceiveCount)
	}
	if r.RedriveAllow != nil {
		m["RedriveAllow"] = at(r.RedriveAllow.Pos)
		put(m, "RedriveAllow.Permission", r.RedriveAllow.Permission)
		for i, s := range r.RedriveAllow.SourceARNs {
			put(m, fmt.Sprintf("RedriveAllow.SourceARNs[%d]", i), s)
		}
	}
	if r.DeadLetter != nil {
		m["DeadLetter"] = at(r.DeadLetter.Pos)
		put(m, "DeadLetter.Topic", r.DeadLetter.Topic)
		put(m, "DeadLetter.MaxDeliveryAttempts", r.DeadLetter.MaxDeliveryAttempts)
	}
	return m
}

func put[T any](m map[string]string, field string, v infra.Value[T]) {
	var s string
	switch v.State {
	case infra.Known:
		s = fmt.Sprintf("known %v %s", v.V, at(v.Pos))
	case infra.Unknown:
		s = "unknown " + at(v.Pos)
	default:
		s = "unset " + at(v.Pos)
	}
	if v.Ref != "" {
		s += " ->" + v.Ref
	}
	m[field] = s
}

func at(p config.Position) string { return fmt.Sprintf("@%d:%d", p.Line, p.Column) }

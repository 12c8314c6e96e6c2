package gcp

import (
	"errors"
	"fmt"

	"cloud.google.com/go/pubsub/v2"
	"github.com/googleapis/gax-go/v2/apierror"

	"github.com/brightergo/brighter/internal/broker"
)

// An exactly-once delivery subscription refuses an acknowledgement (or a
// ModifyAckDeadline) sent with an ack id whose deadline lapsed: the call
// fails with InvalidArgument and an ErrorInfo whose reason is
// exactlyOnceAckIDFailure and whose metadata maps each refused ack id to
// permanentInvalidAckID (or to a TRANSIENT_ failure, which may be tried
// again). Google's emulator answers so too. Outside exactly-once delivery
// Pub/Sub answers such a call with success and nothing tells it apart.
const (
	exactlyOnceAckIDFailure = "EXACTLY_ONCE_ACKID_FAILURE"
	permanentInvalidAckID   = "PERMANENT_FAILURE_INVALID_ACK_ID"
)

// ErrAckRefused is wrapped by a settle or a lease extension an
// exactly-once subscription refused for its ack id: the ack id's deadline
// had lapsed (the service hands the message out again) or it is invalid.
// It wraps broker.ErrStaleReceipt, so the pump reports the settle as
// stale, never as an acknowledgement.
var ErrAckRefused = fmt.Errorf("gcp: the exactly-once subscription refused the ack id: %w", broker.ErrStaleReceipt)

// refusedAckIDs returns the ack ids an exactly-once subscription refused
// for good in err (the error of an Acknowledge or ModifyAckDeadline call),
// or nil when err is not such a refusal.
func refusedAckIDs(err error) map[string]bool {
	var ae *apierror.APIError
	if !errors.As(err, &ae) || ae.Reason() != exactlyOnceAckIDFailure {
		return nil
	}
	out := map[string]bool{}
	for id, why := range ae.Metadata() {
		if why == permanentInvalidAckID {
			out[id] = true
		}
	}
	return out
}

// ackCallErr is the error of a call for ack id (an Acknowledge,
// ModifyAckDeadline) that failed with err, wrapped with what: it wraps
// ErrAckRefused when the subscription refused id for good.
func ackCallErr(what string, id string, err error) error {
	if refusedAckIDs(err)[id] {
		return fmt.Errorf("%s: %w: %w", what, ErrAckRefused, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ackResultErr is the error of a streaming acknowledgement whose result
// (AckWithResult; resolved only on an exactly-once subscription) was st
// and err, wrapped with what: nil on success; wrapping ErrAckRefused when
// the service refused the ack id (AcknowledgeStatusInvalidAckID) or the
// acknowledgement as the message stands (AcknowledgeStatusFailedPrecondition).
func ackResultErr(what string, st pubsub.AcknowledgeStatus, err error) error {
	switch {
	case err == nil && st == pubsub.AcknowledgeStatusSuccess:
		return nil
	case err == nil:
		err = fmt.Errorf("acknowledge status %d", st)
	}
	if st == pubsub.AcknowledgeStatusInvalidAckID || st == pubsub.AcknowledgeStatusFailedPrecondition {
		return fmt.Errorf("%s: %w: %w", what, ErrAckRefused, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

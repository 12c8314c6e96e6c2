package broker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Two Routers whose dead-letter destinations are each other's sources: a
// rejected message goes once round the cycle, and the rejection that
// would route it to a destination on its rejectionPath a second time
// publishes nothing: the message is released with the longest delay,
// reported Permanent with ErrRejectionCycle, and an Error names it, the
// destination and the path. A copy on its way round is routed as before.
func TestRouterRefusesRejectionCycle(t *testing.T) {
	fa, fb := &fake{}, &fake{}
	ra, bufA := newRouter(fa, "qb", "")
	rb, _ := newRouter(fb, "qa", "")
	ra.MaxReleaseDelay = 5 * time.Minute
	rej := message.Rejection{Reason: message.ReasonDeliveryError, Description: "poison"}

	m := received("c1")
	if res := ra.Reject(context.Background(), m, rej); res.Err != nil || res.Released {
		t.Fatalf("first rejection on qa = %+v, want routed", res)
	}
	atB := fa.published[0]
	atB.Receipt = &receipt{handle: "rh-b"}
	if res := rb.Reject(context.Background(), atB, rej); res.Err != nil || res.Released {
		t.Fatalf("rejection on qb = %+v, want routed (qa is not on the path %q)", res, message.RejectionPath(atB))
	}
	back := fb.published[0]
	if got := message.RejectionPath(back); got != "qb,qa" {
		t.Fatalf("path of the copy back on qa = %q, want qb,qa", got)
	}
	back.Receipt = &receipt{handle: "rh-a2"}
	res := ra.Reject(context.Background(), back, rej)
	if !res.Released || !res.Permanent || res.ReleaseDelay != 5*time.Minute || !errors.Is(res.Err, broker.ErrRejectionCycle) ||
		res.Route != broker.RouteDeadLetter || res.Destination != "qb" {
		t.Fatalf("second rejection on qa = %+v, want released permanent after 5m with ErrRejectionCycle", res)
	}
	if got := fmt.Sprint(fa.calls); got != "[publish qb ack release]" {
		t.Fatalf("qa's calls = %s, want the first routing and then only a release", got)
	}
	if fa.settled[1] != back.Receipt {
		t.Errorf("released %v, want the copy's receipt", fa.settled[1])
	}
	recs := logRecords(t, bufA)
	last := recs[len(recs)-1]
	if last["msg"] != broker.LogRoutingCycle || last["level"] != "ERROR" || last["message_id"] != "c1" ||
		last["destination"] != "qb" || last["rejection_path"] != "qb,qa" {
		t.Fatalf("last record %v, want the cycle Error naming c1, qb and the path", last)
	}
}

// The path holds destinations as the Router names them: an Unacceptable
// message whose invalid-message channel is on its path is held back too,
// and a release that fails is logged as a failed release.
func TestRouterRefusesCycleThroughInvalidMessageChannel(t *testing.T) {
	f := &fake{releaseErr: errors.New("gone")}
	r, buf := newRouter(f, "dlq", "inv")
	m := received("c2")
	m.Header.Bag[message.KeyRejectionPath] = "inv,other"
	res := r.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonUnacceptable})
	if !res.Released || !errors.Is(res.Err, broker.ErrRejectionCycle) || res.Route != broker.RouteInvalidMessage || len(f.published) != 0 {
		t.Fatalf("Reject = %+v (published %d), want refused on the invalid-message route", res, len(f.published))
	}
	if recs := logRecords(t, buf); recs[len(recs)-1]["msg"] != broker.LogReleaseFailed {
		t.Fatalf("last record %v, want %q", recs[len(recs)-1], broker.LogReleaseFailed)
	}
	// A DeliveryError of the same message goes to the dead-letter queue,
	// which is not on its path.
	f2 := &fake{}
	r2, _ := newRouter(f2, "dlq", "inv")
	if res := r2.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError}); res.Released || res.Err != nil {
		t.Fatalf("DeliveryError = %+v, want routed to dlq", res)
	}
	if got := message.RejectionPath(f2.published[0]); got != "inv,other,dlq" {
		t.Errorf("path = %q, want inv,other,dlq", got)
	}
}

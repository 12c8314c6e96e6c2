package broker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// A dead-lettered copy moved back to its source by something other than a
// rejection (SQS's redrive to source, a re-send with its attributes) ends
// its path with the dead-letter destination while it is read from the
// source: rejected again, it is routed there again with its new rejection
// (an Info says so), the destination added to its path once more, up to
// MaxRedrives times in a row; the next is held as a cycle. Each redrive
// of the invalid-message route works the same way.
func TestRouterRoutesARedrivenCopyAgain(t *testing.T) {
	f := &fake{}
	r, buf := newRouter(f, "orders-dlq", "")
	r.Source = "orders"
	m := received("r1")
	for round := 0; round <= broker.MaxRedrives; round++ {
		rej := message.Rejection{Reason: message.ReasonDeliveryError, Description: fmt.Sprintf("failure %d", round)}
		res := r.Reject(context.Background(), m, rej)
		if res.Err != nil || res.Released || res.Destination != "orders-dlq" {
			t.Fatalf("rejection after %d redrives = %+v, want routed to orders-dlq", round, res)
		}
		// The operator moves the dead-lettered copy back to its source.
		m = f.published[len(f.published)-1]
		if got := m.Header.Bag[message.KeyRejectionMessage]; got != rej.Description {
			t.Fatalf("copy %d carries rejectionMessage %v, want %q", round, got, rej.Description)
		}
		// Its originalTopic names the source it was moved back to, never
		// the dead-letter queue whose topic the moved copy still carries.
		if got := m.Header.Bag[message.KeyOriginalTopic]; got != "orders" {
			t.Fatalf("copy %d carries originalTopic %v, want orders (the source)", round, got)
		}
		m.Receipt = &receipt{handle: fmt.Sprintf("rh-%d", round)}
	}
	want := strings.TrimSuffix(strings.Repeat("orders-dlq,", broker.MaxRedrives+1), ",")
	if got := message.RejectionPath(m); got != want {
		t.Fatalf("path after %d redrives = %q, want %q", broker.MaxRedrives, got, want)
	}
	redrives := withMessage(logRecords(t, buf), broker.LogRedriven)
	if len(redrives) != broker.MaxRedrives || redrives[0]["level"] != "INFO" || redrives[0]["destination"] != "orders-dlq" || redrives[0]["rejection_path"] != "orders-dlq" {
		t.Fatalf("redrive records %v, want %d Infos naming orders-dlq", redrives, broker.MaxRedrives)
	}
	published := len(f.published)
	res := r.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError})
	if !errors.Is(res.Err, broker.ErrRejectionCycle) || !res.Permanent || len(f.published) != published {
		t.Fatalf("rejection after %d redrives = %+v, want held as a cycle", broker.MaxRedrives+1, res)
	}

	fi := &fake{}
	ri, _ := newRouter(fi, "orders-dlq", "orders-invalid")
	ri.Source = "orders"
	bad := received("r2")
	bad.Header.Bag[message.KeyRejectionPath] = "orders-invalid"
	if res := ri.Reject(context.Background(), bad, message.Rejection{Reason: message.ReasonUnacceptable}); res.Err != nil || res.Route != broker.RouteInvalidMessage {
		t.Fatalf("redriven unacceptable copy = %+v, want routed to orders-invalid", res)
	}
	if got := message.RejectionPath(fi.published[0]); got != "orders-invalid,orders-invalid" {
		t.Errorf("path = %q, want orders-invalid,orders-invalid", got)
	}
}

// What is not a redrive is held as before: a copy that reached the
// destination and went on elsewhere before coming back (a cycle across
// subscriptions), a channel whose destination is itself under another
// spelling (Resolve makes them one), a Router that does not know its
// source, and a redrive the path can no longer record (entries too long
// for one more within MaxRejectionPath).
func TestRouterHoldsWhatIsNotARedrive(t *testing.T) {
	long := strings.Repeat("d", 400)
	lower := func(s string) string { return strings.ToLower(s) }
	for _, tc := range []struct {
		name, source, dest, path string
		resolve                  func(string) string
	}{
		{"went on and came back", "qa", "qb", "qb,qa", nil},
		{"went on elsewhere", "orders", "orders-dlq", "orders-dlq,audit", nil},
		{"destination is the source", "orders-dlq", "orders-dlq", "orders-dlq", nil},
		{"destination is the source spelt another way", "Orders", "orders", "orders", lower},
		{"source unknown", "", "orders-dlq", "orders-dlq", nil},
		{"path cannot record another", "orders", long, long + "," + long, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{}
			r, _ := newRouter(f, tc.dest, "")
			r.Source, r.Resolve = tc.source, tc.resolve
			m := received("h1")
			m.Header.Bag[message.KeyRejectionPath] = tc.path
			res := r.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError})
			if !errors.Is(res.Err, broker.ErrRejectionCycle) || len(f.published) != 0 {
				t.Fatalf("Reject = %+v (published %d), want held as a cycle", res, len(f.published))
			}
		})
	}
	// Resolve also matches the path's entries: a copy dead-lettered by a
	// subscription that spelt the destination another way is a redrive.
	f := &fake{}
	r, _ := newRouter(f, "orders-dlq", "")
	r.Source, r.Resolve = "orders", lower
	m := received("h2")
	m.Header.Bag[message.KeyRejectionPath] = "ORDERS-DLQ"
	if res := r.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError}); res.Err != nil || len(f.published) != 1 {
		t.Fatalf("Reject = %+v, want routed to orders-dlq", res)
	}
}

// withMessage returns the records whose msg is msg.
func withMessage(recs []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

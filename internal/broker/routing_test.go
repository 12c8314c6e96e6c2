package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// fake records every call in one ordered log; it is both the Publisher and
// the Settler of a Router.
type fake struct {
	calls      []string
	published  []*message.Message
	settled    []any           // receipts seen by Acknowledge and Release
	delays     []time.Duration // delays seen by Release
	publishErr error
	releaseErr error
	ackErr     error
	panicWith  any
}

func (f *fake) Publish(_ context.Context, dest string, m *message.Message) error {
	f.calls = append(f.calls, "publish "+dest)
	if f.panicWith != nil {
		panic(f.panicWith)
	}
	f.published = append(f.published, m)
	return f.publishErr
}

func (f *fake) Acknowledge(_ context.Context, m *message.Message) error {
	f.calls = append(f.calls, "ack")
	f.settled = append(f.settled, m.Receipt)
	return f.ackErr
}

func (f *fake) Release(_ context.Context, m *message.Message, delay time.Duration) error {
	f.calls = append(f.calls, "release")
	f.delays = append(f.delays, delay)
	f.settled = append(f.settled, m.Receipt)
	return f.releaseErr
}

type receipt struct{ handle string }

func newRouter(f *fake, dlq, inv string) (*broker.Router, *bytes.Buffer) {
	var buf bytes.Buffer
	return &broker.Router{
		DeadLetter: dlq, Invalid: inv, Publisher: f, Settler: f,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil)),
		Now:    func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC) },
	}, &buf
}

func received(id string) *message.Message {
	m := message.New(id, "orders", message.MTCommand, []byte("{}"))
	m.Header.HandledCount = 2
	m.Receipt = &receipt{handle: "rh-" + id}
	return m
}

func logRecords(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// the route table of docs/wire-format.md#rejection.
func TestRouterSelectRouteTable_R16_R17(t *testing.T) {
	cases := []struct {
		reason       message.RejectionReason
		dlq, inv     string
		wantRoute    broker.Route
		wantDest     string
		wantFellBack bool
	}{
		{message.ReasonUnacceptable, "d", "i", broker.RouteInvalidMessage, "i", false},
		{message.ReasonUnacceptable, "", "i", broker.RouteInvalidMessage, "i", false},
		{message.ReasonUnacceptable, "d", "", broker.RouteDeadLetter, "d", true},
		{message.ReasonUnacceptable, "", "", broker.RouteNone, "", false},
		{message.ReasonDeliveryError, "d", "i", broker.RouteDeadLetter, "d", false},
		{message.ReasonDeliveryError, "d", "", broker.RouteDeadLetter, "d", false},
		{message.ReasonDeliveryError, "", "i", broker.RouteNone, "", false},
		{message.ReasonDeliveryError, "", "", broker.RouteNone, "", false},
		{message.ReasonNone, "d", "i", broker.RouteDeadLetter, "d", false},
		{message.ReasonNone, "", "i", broker.RouteNone, "", false},
		{message.ReasonNone, "", "", broker.RouteNone, "", false},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s dlq=%q inv=%q", tc.reason, tc.dlq, tc.inv)
		t.Run(name, func(t *testing.T) {
			f := &fake{}
			r, buf := newRouter(f, tc.dlq, tc.inv)
			route, dest, fell := r.Select(tc.reason)
			if route != tc.wantRoute || dest != tc.wantDest || fell != tc.wantFellBack {
				t.Fatalf("Select = %s %q %v, want %s %q %v", route, dest, fell, tc.wantRoute, tc.wantDest, tc.wantFellBack)
			}
			m := received("m1")
			res := r.Reject(context.Background(), m, message.Rejection{Reason: tc.reason, Description: "why"})
			if res.Route != tc.wantRoute || res.Destination != tc.wantDest || res.Err != nil || res.Released {
				t.Fatalf("Reject = %+v", res)
			}
			recs := logRecords(t, buf)
			if tc.wantRoute == broker.RouteNone {
				if fmt.Sprint(f.calls) != "[ack]" {
					t.Errorf("calls = %v, want [ack] only (R-17)", f.calls)
				}
				if len(recs) != 1 || recs[0]["msg"] != broker.LogDiscarded || recs[0]["level"] != "WARN" ||
					recs[0]["message_id"] != "m1" || recs[0]["reason"] != tc.reason.String() {
					t.Errorf("records = %v, want one Warning naming m1 and %s", recs, tc.reason)
				}
				return
			}
			if want := "[publish " + tc.wantDest + " ack]"; fmt.Sprint(f.calls) != want {
				t.Errorf("calls = %v, want %s", f.calls, want)
			}
			if got := f.published[0].Header.Topic; got != tc.wantDest {
				t.Errorf("routed copy topic = %q, want %q", got, tc.wantDest)
			}
			fellLogged := false
			for _, rec := range recs {
				if rec["msg"] == broker.LogFallbackDeadLetter {
					fellLogged = true
				}
			}
			if fellLogged != tc.wantFellBack {
				t.Errorf("fallback logged = %v, want %v", fellLogged, tc.wantFellBack)
			}
		})
	}
}

// the copy is published BEFORE the original is acknowledged,
// carries no receipt, and the original's receipt settles the original.
func TestRouterPublishesBeforeAcknowledging_R16_R18(t *testing.T) {
	f := &fake{}
	r, buf := newRouter(f, "orders.dlq", "")
	m := received("m1")
	res := r.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError, Description: "spent"})
	if res.Err != nil || res.Released {
		t.Fatalf("Reject = %+v", res)
	}
	if fmt.Sprint(f.calls) != "[publish orders.dlq ack]" {
		t.Fatalf("calls = %v, want publish then ack", f.calls)
	}
	if f.published[0].Receipt != nil {
		t.Errorf("routed copy carries receipt %v", f.published[0].Receipt)
	}
	if f.settled[0] != m.Receipt {
		t.Errorf("acknowledged receipt %v, want the original's %v", f.settled[0], m.Receipt)
	}
	if ts, _ := f.published[0].Header.Bag.String(message.KeyRejectionTimestamp); ts != "2026-03-04T05:06:07.1234567+00:00" {
		t.Errorf("rejectionTimestamp = %q, from Router.Now", ts)
	}
	recs := logRecords(t, buf)
	if len(recs) != 1 || recs[0]["msg"] != broker.LogRejected || recs[0]["message_id"] != "m1" || recs[0]["route"] != "dead-letter" {
		t.Errorf("records = %v, want one rejected record", recs)
	}
}

// a failed publish is not acknowledged; the original is released with
// its own receipt; an Error names the message and reason; Reject reports it
// settled. A panicking publisher is a failed publish and does not escape.
func TestRouterPublishFailureReleasesOriginal_R19(t *testing.T) {
	cases := []struct {
		name string
		f    *fake
	}{
		{"publish error", &fake{publishErr: errors.New("denied")}},
		{"publisher panics", &fake{panicWith: "kaboom"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, buf := newRouter(tc.f, "orders.dlq", "")
			m := received("m7")
			before := m.Receipt
			var res broker.RejectResult
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic escaped Reject: %v", p)
					}
				}()
				res = r.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError})
			}()
			if !res.Released || res.Err == nil {
				t.Fatalf("Reject = %+v, want Released with Err", res)
			}
			if fmt.Sprint(tc.f.calls) != "[publish orders.dlq release]" {
				t.Errorf("calls = %v, want publish then release, never ack", tc.f.calls)
			}
			if len(tc.f.settled) != 1 || tc.f.settled[0] != before {
				t.Errorf("released with receipt %v, want the original's %v", tc.f.settled, before)
			}
			recs := logRecords(t, buf)
			if len(recs) != 1 || recs[0]["msg"] != broker.LogRoutingFailed || recs[0]["level"] != "ERROR" ||
				recs[0]["message_id"] != "m7" || recs[0]["reason"] != "DeliveryError" {
				t.Errorf("records = %v, want one Error naming m7 and DeliveryError", recs)
			}
		})
	}
}

// when the release fails too, an Error says so and Reject still
// returns.
func TestRouterReleaseFailureLogged_R19(t *testing.T) {
	f := &fake{publishErr: errors.New("denied"), releaseErr: errors.New("gone")}
	r, buf := newRouter(f, "orders.dlq", "")
	res := r.Reject(context.Background(), received("m8"), message.Rejection{Reason: message.ReasonUnacceptable})
	if !res.Released || res.Err == nil || !strings.Contains(res.Err.Error(), "gone") {
		t.Fatalf("Reject = %+v", res)
	}
	recs := logRecords(t, buf)
	var found bool
	for _, rec := range recs {
		if rec["msg"] == broker.LogReleaseFailed && rec["level"] == "ERROR" && rec["message_id"] == "m8" {
			found = true
		}
	}
	if !found {
		t.Errorf("records = %v, want the release-failed Error", recs)
	}
}

// an acknowledge failure after a successful publish is logged at
// Error and reported, and does not escape.
func TestRouterAckFailureAfterPublish_R16(t *testing.T) {
	f := &fake{ackErr: errors.New("timeout")}
	r, buf := newRouter(f, "orders.dlq", "")
	res := r.Reject(context.Background(), received("m9"), message.Rejection{Reason: message.ReasonDeliveryError})
	if res.Released || res.Err == nil || res.Route != broker.RouteDeadLetter {
		t.Fatalf("Reject = %+v", res)
	}
	recs := logRecords(t, buf)
	if len(recs) != 1 || recs[0]["msg"] != broker.LogAckAfterRouteFail || recs[0]["message_id"] != "m9" {
		t.Errorf("records = %v", recs)
	}
}

// AC-33, R-2, R-3, R-28: the presented-count rule.
func TestPresentedCount_AC33(t *testing.T) {
	cases := []struct {
		stamped, attempt int
		routed           bool
		want             int
	}{
		{0, 0, false, 0},   // no broker counter: first delivery
		{0, -4, false, 0},  // negative attempt: first delivery
		{3, 0, false, 3},   // nil/0 attempt keeps the stamped count
		{3, -1, false, 3},  // negative attempt keeps it too
		{0, 1, false, 0},
		{0, 2, false, 1},
		{0, 3, false, 2},
		{2, 3, false, 4},   // stamped + attempt - 1
		{3, 1, true, 3},    // routed copy, first read
		{3, 7, true, 3},    // routed copy re-read
		{-5, 2, false, 1},  // a negative stamp is 0
		{-5, 0, true, 0},   // and stays 0 on a routed copy
		{10, 0, true, 10},  // routed copy with no counter
		{10, 1, false, 10}, // first delivery of a stamped message
	}
	for _, tc := range cases {
		if got := broker.PresentedCount(tc.stamped, tc.attempt, tc.routed); got != tc.want {
			t.Errorf("PresentedCount(%d, %d, %v) = %d, want %d", tc.stamped, tc.attempt, tc.routed, got, tc.want)
		}
	}
}

// A routing failure does not loop hot: a message released after a failed
// routing is released with a delay that doubles with the broker's delivery
// attempt (no local state), capped by the transport's limit, so a failing
// destination costs a few calls a minute per message instead of hundreds a
// second.
func TestRouterRoutingFailureReleaseBacksOff(t *testing.T) {
	for _, tc := range []struct {
		attempt int
		limit   time.Duration
		want    time.Duration
	}{
		{0, 0, time.Second}, {1, 0, time.Second}, {2, 0, 2 * time.Second}, {4, 0, 8 * time.Second},
		{10, 0, 512 * time.Second}, {11, 0, broker.RoutingRetryMax}, {1 << 20, 0, broker.RoutingRetryMax},
		{10, 5 * time.Minute, 5 * time.Minute}, {3, 5 * time.Minute, 4 * time.Second},
	} {
		if got := broker.RoutingFailureDelay(tc.attempt, tc.limit); got != tc.want {
			t.Errorf("RoutingFailureDelay(%d, %s) = %s, want %s", tc.attempt, tc.limit, got, tc.want)
		}
	}
	f := &fake{publishErr: errors.New("no such queue")}
	r, _ := newRouter(f, "orders.dlq", "")
	r.MaxReleaseDelay = 30 * time.Second
	for attempt := 1; attempt <= 7; attempt++ {
		m := received("m9")
		m.DeliveryAttempt = attempt
		res := r.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError})
		if want := broker.RoutingFailureDelay(attempt, 30*time.Second); !res.Released || res.ReleaseDelay != want || f.delays[attempt-1] != want {
			t.Fatalf("attempt %d: Reject = %+v, released with %v, want delay %s", attempt, res, f.delays, want)
		}
	}
	if got := fmt.Sprint(f.delays); got != "[1s 2s 4s 8s 16s 30s 30s]" {
		t.Errorf("release delays = %s, want doubling from 1s capped at 30s", got)
	}
}

// A routing publish that can never succeed is tried once more
// with the rejection message shortened when it was too large, then released
// with the longest delay and reported Permanent; one that fits once
// shortened is routed and acknowledged.
func TestRouterPermanentRoutingFailure(t *testing.T) {
	long := message.Rejection{Reason: message.ReasonDeliveryError, Description: strings.Repeat("é", 100)}
	t.Run("still too large", func(t *testing.T) {
		f := &fake{publishErr: fmt.Errorf("send: %w", broker.ErrTooLarge)}
		r, buf := newRouter(f, "orders.dlq", "")
		r.MaxReleaseDelay = 5 * time.Minute
		res := r.Reject(context.Background(), received("m10"), long)
		if !res.Released || !res.Permanent || res.ReleaseDelay != 5*time.Minute || !errors.Is(res.Err, broker.ErrTooLarge) {
			t.Fatalf("Reject = %+v, want released permanent after 5m", res)
		}
		if fmt.Sprint(f.calls) != "[publish orders.dlq publish orders.dlq release]" {
			t.Fatalf("calls = %v, want two publishes then a release", f.calls)
		}
		short, _ := f.published[1].Header.Bag.String(message.KeyRejectionMessage)
		if len(short) > broker.ShortRejectionMessage || !strings.HasSuffix(short, message.TruncationMarker) || !utf8.ValidString(short) {
			t.Fatalf("shortened rejection message %q (%d bytes)", short, len(short))
		}
		if recs := logRecords(t, buf); recs[len(recs)-1]["msg"] != broker.LogRoutingPermanent || recs[len(recs)-1]["level"] != "ERROR" {
			t.Fatalf("last record %v, want the permanent Error", recs[len(recs)-1])
		}
	})
	t.Run("invalid destination", func(t *testing.T) {
		f := &fake{publishErr: fmt.Errorf("send: %w", broker.ErrPermanent)}
		r, _ := newRouter(f, "orders.dlq", "")
		res := r.Reject(context.Background(), received("m11"), long)
		if !res.Permanent || res.ReleaseDelay != broker.RoutingRetryMax || fmt.Sprint(f.calls) != "[publish orders.dlq release]" {
			t.Fatalf("Reject = %+v, calls %v: want one publish, released for %s", res, f.calls, broker.RoutingRetryMax)
		}
	})
}

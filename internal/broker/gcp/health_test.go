package gcp

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// newEnvBehindProxy is newEnv with the client connected to the emulator
// through a faultproxy.Proxy (Pass until the test switches it), so that a
// test can black-hole the connection: the emulator stays up, nothing the
// client sends reaches it and nothing comes back.
func newEnvBehindProxy(t *testing.T) (*env, *faultproxy.Proxy) {
	t.Helper()
	var proxy *faultproxy.Proxy
	f := &gcptest.Faults{}
	client, srv := gcptest.StartVia(t, "brighter-test", f, Connect, func(emulator string) string {
		p, err := faultproxy.Start(emulator)
		if err != nil {
			t.Fatalf("fault proxy in front of the emulator: %v", err)
		}
		t.Cleanup(p.Close)
		proxy = p
		return p.Addr()
	})
	rec := &recorder{}
	return &env{client: client, project: srv.Project, faults: f, logs: rec, log: slog.New(rec)}, proxy
}

// ordersConsumer creates the orders topic and its orders-sub subscription
// with the test lease (gcpLease) and returns a consumer of mode md on it
// that takes one message at a time.
func (e *env) ordersConsumer(t *testing.T, md mode) broker.Consumer {
	t.Helper()
	e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", AckDeadline: gcpLease})
	return e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", BufferSize: 1, AckDeadline: gcpLease})
}

// runAckingPump runs a pump over c with opts whose handler acknowledges
// everything, and returns the readiness it reports to (ready at the start)
// and its events. The health observer comes first, so it has seen each
// event before an Await on the events returns.
func runAckingPump(t *testing.T, c broker.Consumer, opts pump.Options) (*observe.Health, *pumptest.Events) {
	t.Helper()
	events := pumptest.NewEvents()
	health := observe.NewHealth()
	health.SetReady()
	pumptest.RunPump(t, c, func(context.Context, *message.Message) pump.Result { return pump.Result{Outcome: pump.Ack} },
		opts, health, events)
	return health, events
}

// healthOptions are the pump settings of the readiness tests: the soak's
// timeOut (1 s) and stallAfter (3 s), the default receive margin (10 s).
func healthOptions(v pump.Variant) pump.Options {
	opts := pumptest.Options(v, 1)
	opts.TimeOut = time.Second
	opts.StallAfter = 3 * time.Second
	opts.ReceiveMargin = pump.DefaultReceiveMargin
	opts.MaxChannelFailureDelay = time.Second
	return opts
}

// readyBound is docs/commands/consume.md's bound for readiness to turn
// 503 once the broker is black-holed, counted from the hole: max(stallAfter,
// timeOut + 10s) after the first unanswered call started, which started at
// most timeOut before the hole (a receive in flight) or within timeOut
// after it.
func readyBound(o pump.Options) time.Duration {
	return max(o.StallAfter, o.TimeOut+o.ReceiveMargin) + o.TimeOut
}

// loadSlack is what the readiness tests allow past readyBound: the pump's
// turn and the stall event's delivery on a loaded 2-core machine.
const loadSlack = 2 * time.Second

// TestBlackHoledPullSubscriptionTurnsNotReadyWithinTheBound: an idle pull
// subscription whose connection is black-holed (a fault proxy in front of
// Google's emulator that stops answering) is reported stalled, and the
// consumer not ready, within the documented bound: a Pull cut off by its
// own deadline is confirmed with a probe (GetSubscription), which goes
// unanswered too, so the receive is a channel failure dated from the
// Pull's start, not an empty receive. Once the hole closes the channel
// recovers and readiness returns. Both variants.
func TestBlackHoledPullSubscriptionTurnsNotReadyWithinTheBound(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e, proxy := newEnvBehindProxy(t)
			c := e.ordersConsumer(t, modePull)
			opts := healthOptions(v)
			assertBlackHoleNotReady(t, e, proxy, c, opts, readyBound(opts), "Pull")
		})
	}
}

// assertBlackHoleNotReady runs an idle pump over c until method was called
// and the channel has been healthy for two timeOuts, black-holes the proxy, and asserts that
// EventStalled comes within bound (plus loadSlack) of the hole with a
// channel failure as its reason and readiness 503; then opens the hole
// again and asserts recovery.
func assertBlackHoleNotReady(t *testing.T, e *env, proxy *faultproxy.Proxy, c broker.Consumer, opts pump.Options, bound time.Duration, method string) {
	t.Helper()
	health, events := runAckingPump(t, c, opts)
	pumptest.WaitUntil(t, 30*time.Second, "a "+method+" call", func() bool { return e.faults.Calls(method) >= 1 })
	pumptest.Stays(t, 2*opts.TimeOut, "no channel failure before the hole", func() bool { return events.Count(pump.EventChannelFailure) == 0 })
	hole := time.Now()
	proxy.SetMode(faultproxy.BlackHole)
	st := events.Await(t, pump.EventStalled, bound+loadSlack+5*time.Second, nil)
	took := st.Time.Sub(hole)
	t.Logf("stalled %s into the black hole (bound %s), since %s before the hole, %d failed: %v",
		took.Round(time.Millisecond), bound, hole.Sub(st.Since).Round(time.Millisecond), st.Failures, st.Err)
	if took > bound+loadSlack {
		t.Errorf("stalled %s into the black hole, want within %s (max(stallAfter, timeOut + 10s) + timeOut) and %s slack", took.Round(time.Millisecond), bound, loadSlack)
	}
	if !errors.Is(st.Err, broker.ErrChannelFailure) {
		t.Errorf("stall reason %v, want a channel failure", st.Err)
	}
	if ok, why := health.Ready(); ok || !strings.Contains(why, "no successful broker call since") {
		t.Errorf("readiness while stalled = %v %q, want 503 naming the stall", ok, why)
	}
	proxy.SetMode(faultproxy.Pass)
	proxy.Reset() // the black-holed connections: gRPC dials again
	events.Await(t, pump.EventChannelRecovered, 30*time.Second, nil)
	if ok, why := health.Ready(); !ok {
		t.Errorf("not ready after the hole closed: %s", why)
	}
}

// TestIdlePullSubscriptionStaysReadyWithoutProbes: an idle pull
// subscription on a healthy emulator stays ready through several Pulls,
// and costs no call beyond the Pulls except at most one probe
// (GetSubscription) per Pull cut off by its own deadline: the emulator
// answers an idle Pull about a second before its deadline, so normally
// none is cut off and no probe is made. Calls counted by the gRPC
// interceptor. Both variants.
func TestIdlePullSubscriptionStaysReadyWithoutProbes(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := e.ordersConsumer(t, modePull)
			before := e.faults.Calls("GetSubscription") // EnsureChannels' own
			opts := healthOptions(v)
			opts.TimeOut = pump.DefaultTimeOut
			opts.StallAfter = time.Second
			health, events := runAckingPump(t, c, opts)
			pumptest.WaitUntil(t, 60*time.Second, "six Pulls", func() bool { return e.faults.Calls("Pull") >= 6 })
			// probes first: each follows its Pull's cut-off
			probes := e.faults.Calls("GetSubscription") - before
			pulls, cut := e.faults.Calls("Pull"), e.faults.CutOff("Pull")
			t.Logf("%d Pulls, %d cut off by their deadline, %d probes", pulls, cut, probes)
			if probes > cut {
				t.Errorf("%d probes (GetSubscription) for %d Pulls cut off, want at most one per Pull cut off", probes, cut)
			}
			if n := events.Count(pump.EventChannelFailure); n != 0 {
				t.Errorf("%d channel failures on a healthy idle subscription, want 0: %v", n, events.Of(pump.EventChannelFailure)[0].Err)
			}
			if ok, why := health.Ready(); !ok {
				t.Errorf("an idle healthy subscription is not ready: %s", why)
			}
		})
	}
}

// TestPullsHeldToTheirDeadlineCostOneProbeEach: a service that holds an
// idle Pull until its deadline instead of answering it (the interceptor
// holds every Pull; the service answers everything else) leaves the
// subscription ready: each Pull cut off is confirmed by exactly one probe
// (GetSubscription), which the service answers, so the receive is empty,
// not a failure. Both variants.
func TestPullsHeldToTheirDeadlineCostOneProbeEach(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := e.ordersConsumer(t, modePull)
			before := e.faults.Calls("GetSubscription")
			e.faults.HoldCalls("Pull")
			opts := healthOptions(v)
			opts.TimeOut = 300 * time.Millisecond
			opts.StallAfter = time.Second
			health, events := runAckingPump(t, c, opts)
			pumptest.WaitUntil(t, 60*time.Second, "three Pulls cut off", func() bool { return e.faults.CutOff("Pull") >= 3 })
			// A probe follows its Pull's cut-off: the one in flight may
			// not have been made yet.
			pumptest.WaitUntil(t, 10*time.Second, "a probe for every Pull cut off", func() bool {
				return e.faults.Calls("GetSubscription")-before >= e.faults.CutOff("Pull")
			})
			probes := e.faults.Calls("GetSubscription") - before // first: each follows its Pull's cut-off
			cut := e.faults.CutOff("Pull")
			if probes > cut {
				t.Errorf("%d probes for %d Pulls cut off, want one each", probes, cut)
			}
			if n := events.Count(pump.EventChannelFailure); n != 0 {
				t.Errorf("%d channel failures while the service answered the probes, want 0: %v", n, events.Of(pump.EventChannelFailure)[0].Err)
			}
			if ok, why := health.Ready(); !ok {
				t.Errorf("not ready while the service answers: %s", why)
			}
			e.faults.ReleaseCalls("Pull")
		})
	}
}

// TestBlackHoledStreamSubscriptionTurnsNotReadyWithinTheBound: an idle
// streaming subscription whose connection is black-holed is reported
// stalled, and the consumer not ready, within the documented bound plus
// StreamProbeAfter: the open stream says nothing either way, so after
// StreamProbeAfter with no message and no answered probe a Receive first
// probes the service (GetSubscription), and an unanswered probe is a
// channel failure dated from its start. Once the hole closes the channel
// recovers. Both variants.
func TestBlackHoledStreamSubscriptionTurnsNotReadyWithinTheBound(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e, proxy := newEnvBehindProxy(t)
			c := e.ordersConsumer(t, modeStream)
			opts := healthOptions(v)
			assertBlackHoleNotReady(t, e, proxy, c, opts, readyBound(opts)+StreamProbeAfter, "StreamingPull")
		})
	}
}

// TestIdleStreamSubscriptionStaysReadyWithOneProbePerInterval: an idle
// streaming subscription on a healthy emulator stays ready, and its only
// calls besides the stream are the probes, at most one per
// StreamProbeAfter of silence (not one per Receive). Both variants.
func TestIdleStreamSubscriptionStaysReadyWithOneProbePerInterval(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", AckDeadline: gcpLease})
			before := e.faults.Calls("GetSubscription")
			start := time.Now()
			c := e.consumer(t, modeStream, ConsumerOptions{Subscription: "orders-sub", BufferSize: 1, AckDeadline: gcpLease})
			opts := healthOptions(v)
			opts.TimeOut = pump.DefaultTimeOut
			opts.StallAfter = time.Second
			health, events := runAckingPump(t, c, opts)
			window := 2*StreamProbeAfter + StreamProbeAfter/2
			pumptest.Stays(t, window, "ready, with no channel failure", func() bool {
				ok, _ := health.Ready()
				return ok && events.Count(pump.EventChannelFailure) == 0
			})
			probes := e.faults.Calls("GetSubscription") - before
			most := int64(time.Since(start) / StreamProbeAfter)
			t.Logf("%d probes in %s", probes, time.Since(start).Round(time.Millisecond))
			if probes < 1 || probes > most {
				t.Errorf("%d probes (GetSubscription) in %s of silence, want 1..%d (one per %s)", probes, time.Since(start).Round(time.Millisecond), most, StreamProbeAfter)
			}
		})
	}
}

// TestProbeRefusalCountsAsAnAnswer: the probe of a Pull cut off by its own
// deadline proves the service answers whatever it answers: a refusal
// (PermissionDenied, as for a credential allowed to consume but not to
// read the subscription) makes the receive empty, not a failure; only a
// probe that gets no answer within ProbeTimeout makes it a channel
// failure.
func TestProbeRefusalCountsAsAnAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.ordersConsumer(t, modePull)
	e.faults.HoldCalls("Pull")
	e.faults.FailCall("GetSubscription", status.Error(codes.PermissionDenied, "User not authorized to perform this action."))
	ms, err := c.Receive(ctxT(t, 30*time.Second), 100*time.Millisecond)
	if err != nil || len(ms) != 0 {
		t.Fatalf("Pull cut off, probe refused: got %d messages, %v; want an empty receive", len(ms), err)
	}
	e.faults.FailCall("GetSubscription", nil)
	e.faults.HoldCalls("GetSubscription")
	start := time.Now()
	_, err = c.Receive(ctxT(t, 30*time.Second), 100*time.Millisecond)
	took := time.Since(start)
	if !errors.Is(err, broker.ErrChannelFailure) {
		t.Fatalf("Pull cut off, probe unanswered: %v, want a channel failure", err)
	}
	if want := 100*time.Millisecond + PullGrace + ProbeTimeout; took < want-200*time.Millisecond || took > want+2*time.Second {
		t.Errorf("the unanswered receive took %s, want about %s (timeout + PullGrace + ProbeTimeout)", took.Round(time.Millisecond), want)
	}
}

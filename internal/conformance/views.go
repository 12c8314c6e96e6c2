package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Capabilities of a consumer: the optional interfaces of broker.go it
// implements, as bits.
const (
	capBatchAck = 1 << iota
	capConcurrent
	capLease
	capClientLease
)

// capabilities returns c's optional interfaces as bits.
func capabilities(c broker.Consumer) int {
	n := 0
	if _, ok := c.(broker.BatchAcknowledger); ok {
		n |= capBatchAck
	}
	if cr, ok := c.(broker.ConcurrentReceiver); ok && cr.ReceivesConcurrently() {
		n |= capConcurrent
	}
	if _, ok := c.(broker.LeaseExtender); ok {
		n |= capLease
	}
	if _, ok := c.(broker.ClientLeaser); ok {
		n |= capClientLease
	}
	return n
}

// batchAck records the acknowledgements of a broker.BatchAcknowledger.
type batchAck struct {
	r *RecordingConsumer
	b broker.BatchAcknowledger
}

// AckBatchMax is the wrapped consumer's.
func (a batchAck) AckBatchMax() int { return a.b.AckBatchMax() }

// AcknowledgeBatch forwards the call and counts each acknowledgement that
// succeeded.
func (a batchAck) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	errs := make([]error, len(ms))
	if a.r.killed.Load() {
		for i := range errs {
			errs[i] = errKilled
		}
		return errs
	}
	if a.r.BeforeAck != nil {
		for _, m := range ms {
			a.r.BeforeAck(m)
		}
	}
	var pass []*message.Message // those AckFault lets reach the broker
	var at []int                // pass[j] is ms[at[j]]
	for i, m := range ms {
		if a.r.AckFault != nil {
			if errs[i] = a.r.AckFault(m); errs[i] != nil {
				continue
			}
		}
		pass, at = append(pass, m), append(at, i)
	}
	if len(pass) == 0 {
		return errs
	}
	got := a.b.AcknowledgeBatch(ctx, pass)
	for j, m := range pass {
		if j < len(got) {
			errs[at[j]] = got[j]
		}
		if j < len(got) && got[j] == nil {
			a.r.acked(m)
		}
	}
	return errs
}

// leaseView forwards a broker.LeaseExtender's extensions until Kill.
type leaseView struct {
	r *RecordingConsumer
	l broker.LeaseExtender
}

// LeaseFromReceiveStart passes on whether the wrapped consumer's leases
// run from the receive call's start (broker.LeaseFromReceiveStart), so the
// pump starts its lease clock where the consumer does.
func (v leaseView) LeaseFromReceiveStart() bool {
	fc, ok := v.l.(broker.LeaseFromReceiveStart)
	return ok && fc.LeaseFromReceiveStart()
}

// Lease is the wrapped consumer's lease.
func (v leaseView) Lease() time.Duration { return v.l.Lease() }

// MaxHold is the wrapped consumer's ceiling on holding a message
// (broker.LeaseCeiling), 0 when it has none.
func (v leaseView) MaxHold() time.Duration {
	if lc, ok := v.l.(broker.LeaseCeiling); ok {
		return lc.MaxHold()
	}
	return 0
}

// ExtendLeases forwards the call, less the extensions ExtendFault fails,
// or fails every extension once killed.
func (v leaseView) ExtendLeases(ctx context.Context, ms []*message.Message, d time.Duration) []error {
	errs := make([]error, len(ms))
	if v.r.killed.Load() {
		for i := range errs {
			errs[i] = errKilled
		}
		return errs
	}
	if v.r.ExtendFault == nil {
		return v.l.ExtendLeases(ctx, ms, d)
	}
	var pass []*message.Message // those ExtendFault lets reach the broker
	var at []int                // pass[j] is ms[at[j]]
	for i, m := range ms {
		if errs[i] = v.r.ExtendFault(m); errs[i] == nil {
			pass, at = append(pass, m), append(at, i)
		}
	}
	if len(pass) == 0 {
		return errs
	}
	got := v.l.ExtendLeases(ctx, pass, d)
	for j := range pass {
		if j < len(got) {
			errs[at[j]] = got[j]
		}
	}
	return errs
}

// View returns r as the pump should see it: a consumer with exactly the
// optional capabilities (BatchAcknowledger, ConcurrentReceiver,
// LeaseExtender, ClientLeaser) of the wrapped consumer. It fails the test for a
// combination no transport has yet (add a case here).
func (r *RecordingConsumer) View(t testing.TB) broker.Consumer {
	t.Helper()
	in := r.Consumer
	var v broker.Consumer
	switch capabilities(in) {
	case 0:
		v = r
	case capClientLease:
		v = struct {
			*RecordingConsumer
			broker.ClientLeaser
		}{r, in.(broker.ClientLeaser)}
	case capBatchAck:
		v = struct {
			*RecordingConsumer
			batchAck
		}{r, batchAck{r, in.(broker.BatchAcknowledger)}}
	case capLease:
		v = struct {
			*RecordingConsumer
			leaseView
		}{r, leaseView{r, in.(broker.LeaseExtender)}}
	case capBatchAck | capLease:
		v = struct {
			*RecordingConsumer
			batchAck
			leaseView
		}{r, batchAck{r, in.(broker.BatchAcknowledger)}, leaseView{r, in.(broker.LeaseExtender)}}
	case capBatchAck | capConcurrent | capLease:
		v = struct {
			*RecordingConsumer
			batchAck
			broker.ConcurrentReceiver
			leaseView
		}{r, batchAck{r, in.(broker.BatchAcknowledger)}, in.(broker.ConcurrentReceiver), leaseView{r, in.(broker.LeaseExtender)}}
	default:
		t.Fatalf("RecordingConsumer.View: no transparent view for capabilities %b of %T", capabilities(in), in)
	}
	if got, want := capabilities(v), capabilities(in); got != want {
		t.Fatalf("RecordingConsumer.View offers capabilities %b, the wrapped %T %b", got, in, want)
	}
	return v
}

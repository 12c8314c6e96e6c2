package pump

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// clientLeased is a consumer whose client keeps the leases itself, as the
// Pub/Sub stream's does (broker.ClientLeaser): a 10 s lease from each
// delivery, at (by receipt) saying when. Only broker.Consumer is promoted
// from the memory consumer, so it is no broker.LeaseExtender.
type clientLeased struct {
	broker.Consumer
	at map[any]time.Time
}

func (c clientLeased) ClientLease() time.Duration { return 10 * time.Second }

func (c clientLeased) DeliveredAt(m *message.Message) time.Time { return c.at[m.Receipt] }

// delivery is a delivery of id with receipt r, its broker delivery
// attempt n.
func delivery(id string, r, n int) *message.Message {
	return &message.Message{Header: message.Header{MessageID: id, MessageType: message.MTCommand}, Receipt: r, DeliveryAttempt: n}
}

// A client-leased consumer's messages are tracked against the client's
// lease from their delivery, extending nothing: one whose lease ran out
// while it waited is still dispatched, and its late acknowledgement
// supersedes every later delivery of it the client had buffered (and
// those after, within keepLate), reported once
// (docs/adr/0005-leases.md decision 9).
func TestClientLeasedTrackerSupersedesBufferedRedeliveries(t *testing.T) {
	now := time.Now()
	c := clientLeased{
		Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", BufferSize: 10}),
		at:       map[any]time.Time{1: now.Add(-20 * time.Second), 2: now.Add(-8 * time.Second), 3: now.Add(-2 * time.Second), 4: now.Add(time.Second)},
	}
	l := newLeases(c, DefaultMaxLeaseExtension, func(Event) {})
	if l == nil || l.client == nil || l.ext != nil {
		t.Fatalf("newLeases(client-leased consumer) = %+v, want a tracker that extends nothing", l)
	}
	l.keepLate = time.Minute
	first := delivery("a", 1, 1)
	b := l.holdSince([]*message.Message{first}, now)
	if got := b.b.received; got != l.at(c.at[1]) {
		t.Fatalf("the batch's lease starts at %s, want its delivery to the client (%s)", got, l.at(c.at[1]))
	}
	if adm := l.admit(first, b.at(0), now); adm.kind != admitDispatch {
		t.Fatalf("a delivery whose client lease ran out while it waited: admit = %v, want dispatched", adm.kind)
	}
	if _, late, _ := l.settling(first, b.at(0), now, true); !late {
		t.Fatal("an acknowledgement 20 s after a 10 s client lease began is not late")
	}
	l.settledLate("a", nil, true)
	for i, want := range []struct {
		receipt int
		again   bool
	}{{2, false}, {3, true}, {4, true}} {
		m := delivery("a", want.receipt, 2+i)
		h := l.holdSince([]*message.Message{m}, time.Now())
		adm := l.admit(m, h.at(0), time.Now())
		if adm.kind != admitSuperseded || adm.again != want.again {
			t.Errorf("later delivery %d: admit = %v (again %v), want superseded (again %v)", i+1, adm.kind, adm.again, want.again)
		}
	}
}

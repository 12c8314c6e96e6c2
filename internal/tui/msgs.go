package tui

import (
	"time"

	"github.com/brightergo/brighter/internal/observe"
)

// EventsMsg is a batch of records from the event stream.
type EventsMsg struct {
	Records []observe.Record
	// Dropped is how many records the feeder could not keep up with.
	Dropped uint64
	// Target is the consumer the records came from (its Batcher's
	// Target): brighter watch keeps each target's channel status apart;
	// "" in-process.
	Target string
}

// TotalsMsg carries one target's /metrics totals per subscription.
type TotalsMsg struct {
	Target string
	Totals map[string]observe.Totals
}

// TargetStatusMsg reports whether a target's /events stream is connected.
type TargetStatusMsg struct {
	Target    string
	Connected bool
	// Err is why it is not connected; RetryIn when the next attempt is;
	// Attempt counts failed attempts in a row.
	Err     error
	RetryIn time.Duration
	Attempt int
}

// TickMsg refreshes the rates once a second.
type TickMsg time.Time

// DrainingMsg tells the in-process dashboard that the consumer is draining
// for a reason of its own (a signal, a pump that failed): it shows
// "draining (N in flight)..." from then on, as after q.
type DrainingMsg struct{}

// AwaitingReceiveMsg tells the in-process dashboard of a draining consumer
// that the drain of Subscription waits only for the receive in flight on
// its broker (an SQS long poll), for at most UpTo (its timeOut plus the pump's receive margin, the
// receive's deadline): the
// status line says so instead of "handlers finish and settle", since no
// handler is running.
type AwaitingReceiveMsg struct {
	Subscription string
	UpTo         time.Duration
}

// ConnectingMsg tells the in-process dashboard (consume --tui) that the
// consumer is opening a subscription's channel, before any pump runs:
// until ConnectedMsg the screen says so under the header ("connecting to
// the broker: subscription orders (1 of 2), sqs at http://..., for 3s"),
// the time counted from Since and redrawn on every tick, so a broker that
// is slow or does not answer shows as a wait, not as a blank screen. q
// then gives up the connection (Options.Interrupt) and the line says
// "stopping".
type ConnectingMsg struct {
	// Subscription is the subscription being opened, Index its place
	// (from 1) among Of being opened in turn.
	Subscription string
	Index, Of    int
	// Transport is its transport (sqs, gcp, rocketmq, memory); Endpoint
	// where it connects ("" when it has none), redacted as logs are.
	Transport, Endpoint string
	// Since is when the connection started.
	Since time.Time
	// Opened are the subscriptions whose channels are open already: their
	// rows say connected, this one's connecting, and the rest's waiting
	// (their turn has not come).
	Opened []string
}

// ConnectedMsg tells the in-process dashboard that every channel is open
// and the pumps start: the connecting line goes, the usual dashboard
// stays.
type ConnectedMsg struct{}

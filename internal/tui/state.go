package tui

import (
	"cmp"
	"slices"
	"time"

	"github.com/brightergo/brighter/internal/observe"
)

// state is what the dashboard knows of the consumers it watches, folded
// from the event feed (apply), the /metrics scrapes (setTotals) and the
// targets' connection reports (setTargetStatus): subscriptions with their
// counters and channel status, messages, rejections, Warn/Error log lines.
// The views read it; only those three change it. Its maps are shared by
// every copy of the Model that embeds it.
type state struct {
	subs       map[string]*subState
	msgs       map[string]*msgState
	rejections []rejection // newest first
	logs       []logLine   // oldest first, at most MaxLogs
	logCount   uint64      // every log line seen
	seq        uint64
	totals     map[string]map[string]observe.Totals // target -> sub -> totals
	targets    map[string]*targetState
	dropped    uint64
}

// newState returns an empty state watching targets (none in-process).
func newState(targets []string) state {
	s := state{
		subs: map[string]*subState{}, msgs: map[string]*msgState{},
		totals: map[string]map[string]observe.Totals{}, targets: map[string]*targetState{},
	}
	for _, t := range targets {
		s.targets[t] = &targetState{}
	}
	return s
}

// setTotals takes one target's /metrics totals; the subscriptions' rows
// show them plus the events seen from now on.
func (m *state) setTotals(target string, totals map[string]observe.Totals) {
	m.totals[target] = totals
	for _, sub := range m.subs {
		sub.atScrape = sub.counts
	}
}

// setTargetStatus takes a target's connection report.
func (m *state) setTargetStatus(msg TargetStatusMsg) {
	t := m.targets[msg.Target]
	if t == nil {
		t = &targetState{}
		m.targets[msg.Target] = t
	}
	t.seen, t.connected, t.err, t.retryIn, t.attempt = true, msg.Connected, msg.Err, msg.RetryIn, msg.Attempt
}

type subState struct {
	name   string
	info   *observe.SubscriptionInfo
	budget int
	counts observe.Totals // from events
	// atScrape is counts when the last /metrics totals arrived: the row
	// shows those totals plus the events seen since, so it moves with the
	// messages panel between scrapes.
	atScrape observe.Totals
	depth    int64
	depthOK  bool
	buckets  [rateWindow]struct {
		sec int64
		n   int
	}
	// health is the channel status reported by each target ("" for the
	// in-process dashboard); a target with none is connected.
	health map[string]*channelStatus
}

// channelStatus is what the subscription's channel-failure, stalled,
// channel-recovered and stopped records said last.
type channelStatus struct {
	// failing: broker calls have failed since since, failures in a row,
	// the last with lastErr; stalled: for stallAfter (not ready).
	failing  bool
	since    time.Time
	failures int
	lastErr  string
	stalled  bool
	// stopped: the pump returned, with stopErr when it was not asked to.
	stopped bool
	stopErr string
	// connecting: the consumer opens this channel, since connSince;
	// waitingFor: it opens that subscription's channel first (connecting
	// records, before any pump runs).
	connecting bool
	connSince  time.Time
	waitingFor string
}

// logLine is one Warn/Error log record.
type logLine struct {
	at                   time.Time
	level, text, sub, id string
	attrs                []observe.LogAttr
}

func (s *subState) countReceived(t time.Time) {
	sec := t.Unix()
	b := &s.buckets[((sec%rateWindow)+rateWindow)%rateWindow]
	if b.sec != sec {
		b.sec, b.n = sec, 0
	}
	b.n++
}

func (s *subState) rate(now time.Time) float64 {
	n, sec := 0, now.Unix()
	for _, b := range s.buckets {
		if d := sec - b.sec; d >= 0 && d < rateWindow {
			n += b.n
		}
	}
	return float64(n) / rateWindow
}

type msgState struct {
	id, sub      string
	count        int
	budget       int
	state        string
	settled      bool
	updated      time.Time
	detail       *observe.MessageDetail
	reason       string
	route        string
	dest         string
	desc         string
	seq          uint64
	lastDuration float64
}

type rejection struct {
	at                        time.Time
	id, sub                   string
	count, budget             int
	reason, route, dest, desc string
	err                       string
	detail                    *observe.MessageDetail
}

type targetState struct {
	connected bool
	err       error
	retryIn   time.Duration
	attempt   int
	seen      bool
}

func msgKey(sub, id string) string { return sub + "\x00" + id }

// apply folds one record, from target, into the state.
func (m *state) apply(r *observe.Record, target string) {
	r = visibleRecord(r) // what a message or handler wrote shows escaped
	switch r.Kind {
	case observe.KindSubscription:
		s := m.sub(r.Subscription)
		s.info = r.Info
		s.budget = r.Budget
		if target != "" {
			// The target has the subscription: its connecting records
			// speak of it.
			s.status(target)
		}
		return
	case observe.KindConnecting, observe.KindConnected:
		m.applyConnecting(r, target)
		return
	case observe.KindDLQDepth:
		s := m.sub(r.Subscription)
		s.depth, s.depthOK = r.Depth, true
		return
	case observe.KindDropped:
		m.dropped += r.Dropped
		return
	case observe.KindLog:
		m.logCount++
		m.logs = append(m.logs, logLine{at: r.Time, level: r.Level, text: r.Text, sub: r.Subscription, id: r.MessageID, attrs: r.Attrs})
		if len(m.logs) > MaxLogs {
			m.logs = slices.Delete(m.logs, 0, len(m.logs)-MaxLogs*4/5)
		}
		return
	}
	if r.Subscription == "" {
		return
	}
	s := m.sub(r.Subscription)
	s.budget = r.Budget
	if r.MessageID == "" {
		m.applyHealth(s, target, r)
		return
	}
	k := msgKey(r.Subscription, r.MessageID)
	ms := m.msgs[k]
	if ms == nil {
		ms = &msgState{id: r.MessageID, sub: r.Subscription}
		m.msgs[k] = ms
	}
	m.seq++
	ms.seq, ms.updated, ms.count, ms.budget = m.seq, r.Time, r.DeliveryCount, r.Budget
	if d := r.Detail(); d != nil {
		ms.detail = d
	}
	if r.DurationMS > 0 {
		ms.lastDuration = r.DurationMS
	}
	switch r.Kind {
	case "received":
		s.counts.Received++
		s.counts.InFlight++
		s.countReceived(r.Time)
		ms.state, ms.settled = "in flight", false
	case "acknowledged":
		s.counts.Acknowledged++
		s.counts.InFlight--
		ms.state, ms.settled = "acked", true
	case "deferred":
		s.counts.Deferred++
		s.counts.InFlight--
		ms.state, ms.settled = "deferred", true
	case "budget-exhausted":
		s.counts.BudgetExhausted++
		ms.state = "budget spent"
	case "rejected":
		// Messages, not attempts: a routing that failed is a routing
		// failure, and the retry that lands it counts the message once.
		s.counts.InFlight--
		if r.Error != "" {
			s.counts.RoutingFailures++
		} else {
			s.counts.Rejected++
		}
		ms.state, ms.settled = "rejected", true
		ms.reason, ms.route, ms.dest, ms.desc = r.Reason, r.Route, r.Destination, r.Description
		m.rejections = append(m.rejections, rejection{})
		copy(m.rejections[1:], m.rejections)
		m.rejections[0] = rejection{at: r.Time, id: r.MessageID, sub: r.Subscription, count: r.DeliveryCount, budget: r.Budget,
			reason: r.Reason, route: r.Route, dest: r.Destination, desc: r.Description, err: r.Error, detail: ms.detail}
		if len(m.rejections) > MaxRejections {
			m.rejections = m.rejections[:MaxRejections]
		}
	case "settle-failed":
		s.counts.InFlight--
		ms.state, ms.settled = "settle failed", true
	case "released":
		// Released unstarted at a stop: never counted received or in
		// flight, back on the broker with a delivery spent.
		ms.state, ms.settled = "released", true
	}
}

// applyHealth folds a subscription-level pump record into its status line:
// a channel failure starts (or continues) a failing episode, stalled marks
// it not ready, channel-recovered ends it, started and stopped bracket the
// pump's run.
func (m *state) applyHealth(s *subState, target string, r *observe.Record) {
	switch r.Kind {
	case "channel-failure", "stalled", "channel-recovered", "started", "stopped":
	default:
		return
	}
	h := s.status(target)
	switch r.Kind {
	case "channel-failure", "stalled":
		if !h.failing {
			h.failing, h.since = true, r.Time
		}
		if !r.Since.IsZero() {
			h.since = r.Since
		}
		h.failures = max(h.failures, r.Failures)
		if r.Error != "" {
			h.lastErr = r.Error
		}
		if r.Kind == "stalled" {
			h.stalled = true
		}
	case "channel-recovered":
		*h = channelStatus{}
	case "started":
		*h = channelStatus{}
	case "stopped":
		h.stopped, h.stopErr = true, r.Error
	}
}

// applyConnecting folds a connecting or connected record of target into
// the status of each subscription target described: while the consumer
// opens its channels, in turn, the one being opened is connecting (since
// the record's since), those opened already are connected and the others
// wait for it; connected (every channel open) ends that. The in-process
// dashboard (target "") takes this from ConnectingMsg instead, which also
// draws its connecting line and gives q its meaning.
func (m *state) applyConnecting(r *observe.Record, target string) {
	if target == "" {
		return
	}
	for _, s := range m.subs {
		h := s.health[target]
		if h == nil {
			continue
		}
		switch {
		case r.Kind == observe.KindConnected || slices.Contains(r.Opened, s.name):
			h.connecting, h.waitingFor = false, ""
		case s.name == r.Subscription:
			h.connecting, h.connSince, h.waitingFor = true, r.Since, ""
		default:
			h.connecting, h.waitingFor = false, r.Subscription
		}
	}
}

// status returns the subscription's channel status reported by target,
// made (connected) when it has none.
func (s *subState) status(target string) *channelStatus {
	if s.health == nil {
		s.health = map[string]*channelStatus{}
	}
	h := s.health[target]
	if h == nil {
		h = &channelStatus{}
		s.health[target] = h
	}
	return h
}

func (m *state) sub(name string) *subState {
	s := m.subs[name]
	if s == nil {
		s = &subState{name: name, budget: -1}
		m.subs[name] = s
	}
	return s
}

// trim forgets the oldest settled messages beyond MaxMessages.
func (m *state) trim() {
	if len(m.msgs) <= MaxMessages {
		return
	}
	all := make([]*msgState, 0, len(m.msgs))
	for _, ms := range m.msgs {
		all = append(all, ms)
	}
	slices.SortFunc(all, func(a, b *msgState) int {
		if a.settled != b.settled {
			if a.settled {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, ms := range all[:len(all)-MaxMessages*4/5] {
		delete(m.msgs, msgKey(ms.sub, ms.id))
	}
}

func (m *state) subTotals(name string) (observe.Totals, bool) {
	var t observe.Totals
	found := false
	for _, bySub := range m.totals {
		if x, ok := bySub[name]; ok {
			found = true
			t.Received += x.Received
			t.Acknowledged += x.Acknowledged
			t.Deferred += x.Deferred
			t.Rejected += x.Rejected
			t.BudgetExhausted += x.BudgetExhausted
			t.RoutingFailures += x.RoutingFailures
			t.InFlight += x.InFlight
			if x.HasDLQDepth {
				t.DLQDepth += x.DLQDepth
				t.HasDLQDepth = true
			}
		}
	}
	return t, found
}

// inFlight counts the messages received and not yet settled, over every
// subscription, whatever the filter.
func (m *state) inFlight() int {
	n := 0
	for _, ms := range m.msgs {
		if !ms.settled {
			n++
		}
	}
	return n
}

func (m *state) allUnreachable() bool {
	if len(m.targets) == 0 {
		return false
	}
	for _, t := range m.targets {
		if t.connected || !t.seen {
			return false
		}
	}
	return true
}

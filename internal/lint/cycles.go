package lint

import (
	"strings"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/redact"
)

// Rejection cycles among a file's subscriptions (RuleRejectionCycle): a
// graph whose nodes are the subscriptions and whose edges go from a
// subscription to each subscription of the same transport reading one of
// its rejection destinations (dead-letter, invalid-message and native),
// names compared as the transport resolves them (ChannelKey). Its strongly
// connected components are found in one pass (Tarjan); only a
// subscription in a component of two or more is on a cycle, and only for
// those is the shortest cycle through it looked for, within its component.
// A subscription whose destination is its own source is
// dead-letter-is-source, not a cycle.

// cycleEdge is one step of a rejection cycle: subscription from sends the
// messages it rejects to destination d, which subscription to reads.
type cycleEdge struct {
	from, to *config.Subscription
	d        destination
}

// rejectionCycles returns, for each subscription of f on a rejection cycle
// of two subscriptions or more, the shortest such cycle through it, as its
// edges in order from it back to it. byKey is f's rejection index
// (rejectionIndex.byKey): the edges into a subscription are the
// destinations indexed under what it reads, so a file where no
// subscription reads another's destination costs one look-up per
// subscription and no allocation. Linear in the file's subscriptions and
// destinations when no cycle is found.
func rejectionCycles(f *config.File, byKey map[config.Transport]map[string][]rejectionSource) map[*config.Subscription][]cycleEdge {
	var edges map[*config.Subscription][]cycleEdge
	for _, t := range f.Subscriptions {
		if t == nil {
			continue
		}
		for _, r := range byKey[t.Transport][readKey(t)] {
			if r.src == t {
				continue
			}
			if edges == nil {
				edges = map[*config.Subscription][]cycleEdge{}
			}
			edges[r.src] = append(edges[r.src], cycleEdge{from: r.src, to: t, d: r.d})
		}
	}
	if len(edges) == 0 {
		return nil
	}
	var out map[*config.Subscription][]cycleEdge
	for _, comp := range components(f.Subscriptions, edges) {
		if len(comp) < 2 {
			continue
		}
		in := make(map[*config.Subscription]bool, len(comp))
		for _, s := range comp {
			in[s] = true
		}
		for _, s := range comp {
			if c := shortestCycle(s, edges, in); c != nil {
				if out == nil {
					out = map[*config.Subscription][]cycleEdge{}
				}
				out[s] = c
			}
		}
	}
	return out
}

// components returns the strongly connected components of the graph
// (Tarjan's algorithm), each a list of subscriptions.
func components(subs []*config.Subscription, edges map[*config.Subscription][]cycleEdge) [][]*config.Subscription {
	type mark struct {
		index, low int
		onStack    bool
	}
	marks := map[*config.Subscription]*mark{}
	var stack []*config.Subscription
	var out [][]*config.Subscription
	next := 0
	var visit func(s *config.Subscription)
	visit = func(s *config.Subscription) {
		m := &mark{index: next, low: next, onStack: true}
		marks[s] = m
		next++
		stack = append(stack, s)
		for _, e := range edges[s] {
			if w, seen := marks[e.to]; !seen {
				visit(e.to)
				m.low = min(m.low, marks[e.to].low)
			} else if w.onStack {
				m.low = min(m.low, w.index)
			}
		}
		if m.low != m.index {
			return
		}
		var comp []*config.Subscription
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			marks[w].onStack = false
			comp = append(comp, w)
			if w == s {
				break
			}
		}
		out = append(out, comp)
	}
	for _, s := range subs {
		if s == nil || edges[s] == nil {
			continue
		}
		if _, seen := marks[s]; !seen {
			visit(s)
		}
	}
	return out
}

// shortestCycle returns the shortest cycle from s back to s through the
// subscriptions in (breadth first), or nil.
func shortestCycle(s *config.Subscription, edges map[*config.Subscription][]cycleEdge, in map[*config.Subscription]bool) []cycleEdge {
	via := map[*config.Subscription]cycleEdge{}
	queue := []*config.Subscription{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, e := range edges[u] {
			if !in[e.to] {
				continue
			}
			if e.to == s {
				c := []cycleEdge{e}
				for at := u; at != s; at = via[at].from {
					c = append(c, via[at])
				}
				for i, j := 0, len(c)-1; i < j; i, j = i+1, j-1 {
					c[i], c[j] = c[j], c[i]
				}
				return c
			}
			if _, seen := via[e.to]; !seen {
				via[e.to] = e
				queue = append(queue, e.to)
			}
		}
	}
	return nil
}

// appendRejectionCycle adds, for subscription s of the indexed file, the
// rejection-cycle finding when s is on a cycle: it names every subscription
// of the shortest cycle through s and the destination of each step, and
// points at s's destination that leads round it.
func (x *rejectionIndex) appendRejectionCycle(out []Finding, s *config.Subscription) []Finding {
	if x == nil || s == nil {
		return out
	}
	cyc := x.cycles[s]
	if len(cyc) == 0 {
		return out
	}
	var b strings.Builder
	for _, e := range cyc {
		b.WriteString(redact.Quote(e.from.Name) + " (" + e.d.field + " " + redact.Quote(e.d.name) + ") -> ")
	}
	b.WriteString(redact.Quote(s.Name))
	c := &check{s: s, out: out}
	c.add(RuleRejectionCycle, cyc[0].d.field,
		"subscription %q is on a rejection cycle of %d subscriptions: %s; a message rejected on any of them is routed round it for ever, a new copy at each step that no budget or native redrive limit stops; give one of them a destination no subscription of the cycle reads",
		s.Name, len(cyc), b.String())
	return c.out
}

package lint

import (
	"fmt"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/config"
)

// restartCost is what stops and kills of the consumer can cost s's
// messages, as restarts-spend-budget judges it. The broker counts every
// delivery, and a message waiting in the pump's buffer when the process
// stops goes back to the broker without a handler run: that delivery of its
// budget is spent.
type restartCost struct {
	// performers and buffer are noOfPerformers and bufferSize (at least 1).
	performers, buffer int
	// proactor is true for the Proactor, which receives a full buffer ahead
	// while its workers handle.
	proactor bool
	// holds is the most messages one performer holds at once: bufferSize,
	// Proactor plus the one in its handler.
	holds int
	// waiting is the most messages that can wait in the buffer, received
	// but not in a handler: Proactor noOfPerformers x bufferSize, Reactor
	// noOfPerformers x (bufferSize - 1) (the rest of each received batch).
	waiting int
	// exposed is the most messages one kill costs a delivery: those
	// waiting plus the one in each performer's handler.
	exposed int
	// drainNeeds is how long one performer may take to handle to the end
	// every message it holds at a graceful stop (bufferSize, Proactor plus
	// one, times handler.timeout; heldFor); 0 for a builtin handler, which
	// returns at once.
	drainNeeds time.Duration
	// drainShort is true when drainTimeout is shorter than drainNeeds: a
	// graceful stop may release buffered messages unhandled.
	drainShort bool
	// lost is how many deliveries one rolling deploy (one graceful stop)
	// and one crash (one kill) can cost a message waiting in the buffer:
	// 1 for the kill, plus 1 when the stop cannot get through the buffer.
	lost int
}

// restartCostOf returns what stops and kills cost s's buffered messages.
func restartCostOf(s *config.Subscription) restartCost {
	c := restartCost{
		performers: max(s.NoOfPerformers, 1),
		buffer:     max(s.BufferSize, 1),
		proactor:   s.MessagePumpType != config.Reactor,
	}
	c.holds = c.buffer
	if c.proactor {
		c.holds++
	}
	c.waiting = c.performers * (c.holds - 1)
	c.exposed = c.performers * c.holds
	if s.Handler.Type == config.HandlerExec || s.Handler.Type == config.HandlerHTTP {
		c.drainNeeds = heldFor(s)
		c.drainShort = s.DrainTimeout < c.drainNeeds
	}
	c.lost = 1
	if c.drainShort {
		c.lost++
	}
	return c
}

// restartsRule adds restarts-spend-budget. It judges a message waiting in
// the buffer (none waits in a Reactor of bufferSize 1): the kill of one
// crash costs it a delivery, and so does the graceful stop of one rolling
// deploy when drainTimeout cannot get through the buffer. A budget of R
// (at least 2) that those lost deliveries can bring down to a single
// handler run (R <= lost + 1) is reported, and so is a drain too short for
// the buffer whatever the budget; either finding says too that 2 x R stops
// or crashes that each catch the same message dead-letter it with no
// handler run at all (noRunLeft). A budget of 1 (and 0 or below -1, which
// behave as 1) loses no run: a delivery that arrives with its budget spent
// is still handed to its handler once. -1 is unlimited.
func (c *check) restartsRule(s *config.Subscription) {
	r := s.RequeueCount
	if r < 2 {
		return
	}
	rc := restartCostOf(s)
	if rc.waiting == 0 {
		return
	}
	spends := r <= rc.lost+1
	if !spends && !rc.drainShort {
		return
	}
	held := fmt.Sprintf("noOfPerformers %d x bufferSize %d received ahead, plus %d in handlers", rc.performers, rc.buffer, rc.performers)
	if !rc.proactor {
		held = fmt.Sprintf("noOfPerformers %d x bufferSize %d received in batches, %d of them in handlers", rc.performers, rc.buffer, rc.performers)
	}
	drain := ""
	if rc.drainShort {
		drain = fmt.Sprintf("drainTimeout %s cannot get through the buffer (a performer may hold %d messages of up to handler.timeout %s each, %s)",
			config.FormatDuration(s.DrainTimeout), rc.holds, config.FormatDuration(s.Handler.Timeout), config.FormatDuration(rc.drainNeeds))
	}
	if !spends {
		c.add(RuleRestartsSpendBudget, pick(s, "drainTimeout", "bufferSize", "handler.timeout"),
			"subscription %q: %s, so every graceful stop releases up to %s unhandled, each with a delivery of its requeueCount %d spent without a handler run; %s; set drainTimeout to at least %s, or lower bufferSize",
			s.Name, drain, waitingMessages(rc.waiting), r, noRunLeft(r), config.FormatDuration(rc.drainNeeds))
		return
	}
	var why strings.Builder
	fmt.Fprintf(&why, "a kill costs every message in the pump a delivery (up to %d: %s)", rc.exposed, held)
	if rc.drainShort {
		fmt.Fprintf(&why, ", and %s, so a graceful stop releases up to %s unhandled as well", drain, waitingMessages(rc.waiting))
	}
	// A drain that gets through the buffer leaves the kill alone (lost 1),
	// which a budget of 3 survives with two runs; a larger budget alone
	// does not end a drain's shortfall, so it is not offered then.
	fix := "use requeueCount: 3 or more"
	if rc.drainShort {
		fix = fmt.Sprintf("set drainTimeout to at least %s or lower bufferSize", config.FormatDuration(rc.drainNeeds))
		if r < 3 {
			fix += ", and use requeueCount: 3 or more"
		}
	}
	fix += ", or messagePumpType: reactor with bufferSize: 1, where no message waits in a buffer"
	c.add(RuleRestartsSpendBudget, pick(s, "requeueCount", "bufferSize"),
		"subscription %q: requeueCount %d: %s; one rolling deploy and one crash can spend %d of a buffered message's %d deliveries and leave it a single handler run; %s; %s",
		s.Name, r, why.String(), rc.lost, r, noRunLeft(r), fix)
}

// noRunLeft says what stops and crashes that catch one message every time
// cost it under requeueCount r (at least 2): the budget forgives r such
// deliveries, and past 2 x r the message is dead-lettered without a run
// (internal/pump's spentByHandlers; ForgivenDeliveries).
func noRunLeft(r int) string {
	return fmt.Sprintf("%d stops or crashes that each catch the same message (2 x requeueCount: a rolling deploy that releases it again and again, a crash loop) dead-letter it on its next delivery with no handler run at all, the rejection message saying so",
		ForgivenDeliveries(r))
}

// waitingMessages is "1 waiting message" or "n waiting messages".
func waitingMessages(n int) string {
	if n == 1 {
		return "1 waiting message"
	}
	return fmt.Sprintf("%d waiting messages", n)
}

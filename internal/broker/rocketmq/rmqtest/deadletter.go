package rmqtest

import (
	"context"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
)

// DefaultMaxDeliveryAttempts is how many times a consumer group is given a
// message before it is dead-lettered to %DLQ%<group> (RocketMQ's default
// maximum of 16; see the package comment for how it is counted).
const DefaultMaxDeliveryAttempts = 16

// DLQPrefix prefixes a consumer group's native dead-letter topic.
const DLQPrefix = "%DLQ%"

// sweepInterval is how often lapsed messages are checked for native
// dead-lettering.
const sweepInterval = 50 * time.Millisecond

// SetMaxDeliveryAttempts sets one consumer group's maximum delivery attempts of a
// message before native dead-lettering (n <= 0 restores the default).
func (s *Server) SetMaxDeliveryAttempts(group string, n int) {
	if n <= 0 {
		n = s.opts.MaxDeliveryAttempts
	}
	s.mu.Lock()
	s.groupLocked(group).max = n
	s.mu.Unlock()
}

// deadLetterLocked moves st, unchanged, to %DLQ%<group>.
func (s *Server) deadLetterLocked(group string, st *stored, d *delivery) {
	d.done = true
	if d.handle != "" {
		delete(s.handles, d.handle)
		d.handle = ""
	}
	m := proto.Clone(st.msg).(*v2.Message)
	sp := m.GetSystemProperties()
	sp.DeliveryTimestamp, sp.ReceiptHandle, sp.DeliveryAttempt = nil, nil, nil
	s.storeLocked(DLQPrefix+group, m)
	s.log.Debug("rmqtest dead-lettered", "message_id", sp.GetMessageId(), "group", group, "attempts", d.attempts)
	s.signalLocked()
}

// sweeper dead-letters lapsed messages that have used up their group's
// deliveries, even when no one is receiving.
func (s *Server) sweeper(ctx context.Context) {
	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.mu.Lock()
		now := time.Now()
		for name, g := range s.groups {
			for st, d := range g.state {
				if !d.done && d.attempts > 0 && int(d.attempts) >= g.max && !now.Before(d.invisibleUntil) {
					s.deadLetterLocked(name, st, d)
				}
			}
		}
		s.mu.Unlock()
	}
}

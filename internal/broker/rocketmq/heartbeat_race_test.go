package rocketmq_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// TestSendDuringFirstHeartbeatRaceFree: a producer that sends
// without pause across its client's first heartbeat (one second after
// Start) gives the race detector nothing to report (rocketmq-clients
// v5.1.2 copies the producer's isolated sync.Map in Send while that
// heartbeat initialises it; isolated.go). Under -race, as make test runs
// it, a report fails this test; the send loop spans the heartbeat with a
// margin for a loaded machine.
func TestSendDuringFirstHeartbeatRaceFree(t *testing.T) {
	e := newEnv(t, "hb")
	for i := range 3 { // three producers: three first heartbeats
		p := e.producer("hb")
		start := time.Now()
		for n := 0; time.Since(start) < 2500*time.Millisecond; n++ {
			m := message.New(fmt.Sprintf("hb-%d-%d", i, n), "hb", message.MTCommand, []byte(`{}`))
			if err := p.Send(e.ctx, m); err != nil {
				t.Fatalf("send %s: %v", m.Header.MessageID, err)
			}
		}
	}
}

package pump

import (
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// reactor runs NoOfPerformers performers, each handling its batch in order.
// A performer settles each message before its next one, except an
// acknowledgement, which it hands to the run's settle batcher when the
// consumer offers broker.BatchAcknowledger (settler.go): the batcher sends
// it within its bound while the performer goes on (the performer sends a
// batch its acknowledgement filled itself, one broker call). An acknowledgement
// whose lease had lapsed (sent within ackBatchWait) is waited for before
// the performer's next receive, which could otherwise be handed the same
// message again before it (ADR 0004, "The Reactor settles
// acknowledgements through the same batcher").
func (r *run) reactor() {
	acks, flush := r.startSettler()
	var wg sync.WaitGroup
	for range r.p.opts.NoOfPerformers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sent sync.WaitGroup
			sink := newAckSink(acks, &sent)
			for {
				ms, lb, ok := r.receive()
				if !ok {
					return
				}
				handed := false
				r.handling.Add(1)  // the batch's handlers run or may: see AwaitingReceive
				var last time.Time // the previous message's reading of the clock (handleAt)
				for i, m := range ms {
					if m.Header.MessageType == message.MTQuit {
						r.halt(nil)
						continue
					}
					if r.stopping() && !r.mayStart() {
						for j := i; j < len(ms); j++ {
							r.release(ms[j], lb.at(j))
						}
						break
					}
					var h bool
					h, last = r.handleAt(m, lb.at(i), sink, last)
					handed = h || handed
				}
				r.handling.Add(-1)
				if handed {
					sent.Wait()
				}
			}
		}()
	}
	wg.Wait()
	r.releaseHeld()
	flush()
}

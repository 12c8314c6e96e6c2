package pump

import (
	"sync"

	"github.com/brightergo/brighter/internal/message"
)

// reactor runs NoOfPerformers performers, each handling its batch in order.
// A performer settles each message before its next one, except an
// acknowledgement, which it hands to the run's settle batcher when the
// consumer offers broker.BatchAcknowledger (settler.go); before its next
// receive it asks the batcher to send what it holds (within ackBatchWait)
// and waits until every acknowledgement of its batch has been sent, so a
// Reactor still receives again only once its batch is settled (ADR 0004,
// "The Reactor settles acknowledgements through the same batcher").
func (r *run) reactor() {
	acks, flush := r.startSettler()
	var wg sync.WaitGroup
	for range r.p.opts.NoOfPerformers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sent sync.WaitGroup
			sink := ackSink{to: acks, sent: &sent}
			for {
				ms, lb, ok := r.receive()
				if !ok {
					return
				}
				handed := false
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
					handed = r.handle(m, lb.at(i), sink) || handed
				}
				if handed {
					acks <- ackItem{} // send what the batch holds now
					sent.Wait()
				}
			}
		}()
	}
	wg.Wait()
	r.releaseHeld()
	flush()
}

package pump

import (
	"sync"

	"github.com/brightergo/brighter/internal/message"
)

// reactor runs NoOfPerformers performers, each handling its batch in order.
func (r *run) reactor() {
	var wg sync.WaitGroup
	for range r.p.opts.NoOfPerformers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ms, lb, ok := r.receive()
				if !ok {
					return
				}
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
					r.handle(m, lb.at(i), nil)
				}
			}
		}()
	}
	wg.Wait()
	r.releaseHeld()
}

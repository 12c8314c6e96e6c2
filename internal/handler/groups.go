package handler

import (
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/config"
)

// Groups is the set of exec handler runs under way whose process groups a
// command must end before it exits: consume gives one to every exec
// handler it builds (WithGroups) and calls End once its pumps have
// returned, and before a second signal's exit, so that no process a
// handler started outlives consume, whether or not the pump waited for
// the handler to return. The zero value is not usable: make it with
// NewGroups. Its methods are safe for concurrent use; a nil *Groups tracks
// nothing.
type Groups struct {
	mu    sync.Mutex
	live  map[*runGroup]struct{}
	ended bool
}

// NewGroups returns an empty Groups.
func NewGroups() *Groups { return &Groups{live: make(map[*runGroup]struct{})} }

// add records g, a run whose command has started. After End, g is
// ended at once (SIGTERM now, SIGKILL after its grace): nothing starts
// once the command is ending.
func (gs *Groups) add(g *runGroup) {
	if gs == nil || g == nil {
		return
	}
	gs.mu.Lock()
	gs.live[g] = struct{}{}
	ended := gs.ended
	gs.mu.Unlock()
	if ended {
		g.terminate(true)
	}
}

// remove forgets g: its run has ended its group.
func (gs *Groups) remove(g *runGroup) {
	if gs == nil || g == nil {
		return
	}
	gs.mu.Lock()
	delete(gs.live, g)
	gs.mu.Unlock()
}

// End ends the process group of every run still under way, all at once
// and as a run's own end does: SIGTERM to each group (unless its run's
// cancellation already sent it), then SIGKILL to each group still alive
// once the grace (ExecOptions.KillGrace) has passed since that SIGTERM;
// it returns when every group is gone (or, for a group SIGKILL did not
// empty, a second after the kill). It reports how many groups still had a
// process. Runs starting after End are ended at once.
func (gs *Groups) End() int {
	if gs == nil {
		return 0
	}
	gs.mu.Lock()
	gs.ended = true
	live := make([]*runGroup, 0, len(gs.live))
	for g := range gs.live {
		live = append(live, g)
	}
	gs.mu.Unlock()
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		n  int
	)
	for _, g := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if endGroup(g) > 0 {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return n
}

// CutOffGrace is how long a handler of cfg may take to return once a stop
// has cut it off (its context cancelled), for pump.Options.CutOffGrace:
// for an exec handler its kill grace (DefaultKillGrace: SIGTERM to its
// group, then SIGKILL), the wait for the kill to land and a second to
// spare; 0 for the others, which return when their context ends.
func CutOffGrace(cfg config.Handler) time.Duration {
	if cfg.Type != config.HandlerExec {
		return 0
	}
	return DefaultKillGrace + killWait + time.Second
}

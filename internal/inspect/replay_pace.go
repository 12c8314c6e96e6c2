package inspect

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/brightergo/brighter/internal/message"
)

// The pacing of a replay's publishes under ReplayOptions.Rate (--rate).

// replayBatch is the most messages one replay worker publishes (and then
// removes) together: SQS's batch limit of ten.
const replayBatch = 10

// rateBatch is the most messages one replay worker publishes together under
// a limit of r publishes a second (ReplayOptions.Rate), and the limiter's
// burst: a tenth of a second's worth, at least one and at most
// replayBatch. Below 20 a second every message is its own publish, spaced
// 1/r apart; from 100 a second batches of ten still go, ten tokens at a
// time, so the limit costs no extra requests.
func rateBatch(r float64) int {
	return max(1, min(replayBatch, int(r/10)))
}

// replayJob is one selected message handed to a replay worker: the
// message read (m), its copy to publish (c) and what became of it.
type replayJob struct {
	m, c *message.Message
	out  Outcome
}

// replayPacer paces a replay's publishes (ReplayOptions.Rate): a batch
// takes its tokens just before its send. The zero limiter (lim nil) admits
// everything at once.
type replayPacer struct {
	lim *rate.Limiter
	// journal tells the copies an earlier run sent (only removed, not
	// published again: they take no token); nil with ReplayOptions.Copy.
	journal ReplayJournal
}

// newReplayPacer returns the pacer of o and the most messages one worker
// publishes together: replayBatch, or rateBatch under a rate.
func newReplayPacer(o ReplayOptions) (*replayPacer, int) {
	p := &replayPacer{journal: o.Journal}
	if o.Copy {
		p.journal = nil
	}
	if o.Rate <= 0 {
		return p, replayBatch
	}
	n := rateBatch(o.Rate)
	p.lim = rate.NewLimiter(rate.Limit(o.Rate), n)
	return p, n
}

// wait waits until the limiter admits the publishes of batch (not the
// duplicates, nor the copies the journal records as sent: those are
// only removed), just before its send, so that --rate spaces the
// publishes themselves rather than the scan's reads. It reports false
// when ctx ended first; the tokens are then given back.
func (p *replayPacer) wait(ctx context.Context, batch []replayJob) bool {
	if p.lim == nil {
		return true
	}
	n := 0
	for _, j := range batch {
		rid, _ := j.c.Header.Bag.String(KeyReplayID)
		if !j.out.Duplicate && (p.journal == nil || !p.journal.Sent(rid)) {
			n++
		}
	}
	if n == 0 {
		return true
	}
	r := p.lim.ReserveN(time.Now(), n)
	if !r.OK() {
		// Not reached: a batch is never larger than the burst.
		return true
	}
	d := r.Delay()
	if d == 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		r.Cancel()
		return false
	}
}

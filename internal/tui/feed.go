package tui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/observe"
)

// DefaultBatchInterval is how often a Batcher hands the model a batch: the
// dashboard redraws at most 1/DefaultBatchInterval = 10 times a second
// because of events.
const DefaultBatchInterval = 100 * time.Millisecond

// DefaultBatchLimit is how many records a Batcher holds between two
// batches before it drops (and counts) the rest.
const DefaultBatchLimit = 100_000

// Batcher collects records from any number of goroutines and sends them to
// the dashboard as one EventsMsg per interval. Add never blocks; past the
// limit it counts records as dropped, reported in the next EventsMsg.
type Batcher struct {
	// Target, when set before the first Take, is put on every EventsMsg:
	// brighter watch runs one Batcher per target, so the dashboard keeps
	// each replica's channel status apart.
	Target string

	mu       sync.Mutex
	buf      []observe.Record
	dropped  uint64
	limit    int
	interval time.Duration
}

// NewBatcher returns a batcher; non-positive interval or limit take the
// defaults.
func NewBatcher(interval time.Duration, limit int) *Batcher {
	if interval <= 0 {
		interval = DefaultBatchInterval
	}
	if limit <= 0 {
		limit = DefaultBatchLimit
	}
	return &Batcher{interval: interval, limit: limit}
}

// Add queues one record.
func (b *Batcher) Add(r observe.Record) {
	b.mu.Lock()
	if len(b.buf) < b.limit {
		b.buf = append(b.buf, r)
	} else {
		b.dropped++
	}
	b.mu.Unlock()
}

// Take returns what was queued since the last call (nil, 0 when nothing).
func (b *Batcher) Take() (EventsMsg, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf) == 0 && b.dropped == 0 {
		return EventsMsg{}, false
	}
	m := EventsMsg{Records: b.buf, Dropped: b.dropped, Target: b.Target}
	// Room for half as much again as this batch: a steady stream then fills
	// the next batch without regrowing (and copying) it.
	n := len(m.Records)
	b.buf, b.dropped = make([]observe.Record, 0, min(n+n/2, b.limit)), 0
	return m, true
}

// Run sends a batch to send every interval until ctx is done. send may
// block (tea.Program.Send does until the model takes it); records keep
// queueing meanwhile.
func (b *Batcher) Run(ctx context.Context, send func(tea.Msg)) {
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if m, ok := b.Take(); ok {
				send(m)
			}
		}
	}
}

// FeedStream reads an in-process stream reader into b until ctx is done
// (consume --tui). It closes rd when it returns.
func FeedStream(ctx context.Context, rd *observe.Reader, b *Batcher) {
	defer rd.Close()
	// Drain on a ticker, never wait on the channel: the pump's sends then
	// never wake this goroutine (see observe.DrainInterval).
	t := time.NewTicker(observe.DrainInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if d := rd.TakeDropped(); d > 0 {
				b.Add(observe.Record{Kind: observe.KindDropped, Time: now.UTC(), Dropped: d})
			}
			for more := true; more; {
				select {
				case r := <-rd.C():
					b.Add(*r)
				default:
					more = false
				}
			}
		}
	}
}

// Time limits of Watch's HTTP client (NewWatchClient): how long a
// connection to a target may take to open, and how long the target may
// take to answer a request's headers. They bound each attempt, never the
// /events stream itself, which lives as long as the consumer runs.
const (
	// DialTimeout bounds opening the TCP connection to a target.
	DialTimeout = 5 * time.Second
	// HeaderTimeout bounds the wait for a target's response headers (a
	// consumer's /events answers them at once, before any event).
	HeaderTimeout = 5 * time.Second
)

// NewWatchClient returns the HTTP client Watch needs: connections open
// within DialTimeout and targets answer within HeaderTimeout, so a target
// that accepts connections and never answers is reported unreachable and
// retried, while an answered /events stream has no deadline.
func NewWatchClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = HeaderTimeout
	return &http.Client{Transport: tr}
}

// Retry delays of Watch: the first retry after MinRetry, doubling up to
// MaxRetry.
const (
	MinRetry = 500 * time.Millisecond
	MaxRetry = 5 * time.Second
	// TotalsInterval is how often Watch scrapes /metrics.
	TotalsInterval = 2 * time.Second
)

// Watch follows one target (a consumer's --listen base URL, e.g.
// http://127.0.0.1:9464) until ctx is done: it streams /events into b,
// scrapes /metrics into TotalsMsg every TotalsInterval, and reports
// connection changes with TargetStatusMsg; an unreachable target is retried
// for ever with backoff. A stream the target ends (the consumer stopped) is
// reported as ended, and so are the failed reconnections that follow.
func Watch(ctx context.Context, client *http.Client, target string, b *Batcher, send func(tea.Msg)) {
	base := strings.TrimRight(target, "/")
	go scrapeTotals(ctx, client, target, base+"/metrics", send)
	attempt := 0
	delay := MinRetry
	// ended: the last stream the target served ended cleanly (it stopped);
	// the failed reconnections after it still say so.
	ended := false
	for ctx.Err() == nil {
		err := streamEvents(ctx, client, base+"/events", b, func() {
			attempt, delay, ended = 0, MinRetry, false
			send(TargetStatusMsg{Target: target, Connected: true})
		})
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, errStreamEnded):
			ended = true
		case ended:
			err = fmt.Errorf("%w; reconnecting: %w", errStreamEnded, err)
		}
		attempt++
		send(TargetStatusMsg{Target: target, Err: err, RetryIn: delay, Attempt: attempt})
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, MaxRetry)
	}
}

// errStreamEnded is reported when a target closes its stream (it stopped).
var errStreamEnded = errors.New("event stream ended (consumer stopped?)")

func streamEvents(ctx context.Context, client *http.Client, url string, b *Batcher, connected func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("events request: %w", err)
	}
	req.Header.Set("Accept", observe.ContentTypeNDJSON)
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
			if oe := (*net.OpError)(nil); errors.As(err, &oe) && oe.Op == "dial" {
				return fmt.Errorf("no connection within %s: %w", DialTimeout, shortErr(err))
			}
			return fmt.Errorf("no answer within %s (it accepts connections but does not respond): %w", HeaderTimeout, shortErr(err))
		}
		return shortErr(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	connected()
	if err := observe.ReadEvents(resp.Body, b.Add); err != nil {
		return err
	}
	return errStreamEnded
}

// shortErr keeps the useful end of a net/http error ("connection refused")
// for a one-line status.
func shortErr(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

func scrapeTotals(ctx context.Context, client *http.Client, target, url string, send func(tea.Msg)) {
	t := time.NewTicker(TotalsInterval)
	defer t.Stop()
	for {
		if totals, err := fetchTotals(ctx, client, url); err == nil {
			send(TotalsMsg{Target: target, Totals: totals})
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func fetchTotals(ctx context.Context, client *http.Client, url string) (map[string]observe.Totals, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics request: %w", err)
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return observe.ParseTotals(resp.Body)
}

package sqstest

import (
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Counter is a reverse proxy in front of the emulator that counts the SQS
// and SNS actions passing through it (the AWS JSON protocol's X-Amz-Target
// without its service prefix, or the query protocol's Action): the billed
// calls of whatever talks to the emulator through URL. Benchmarks read the
// counts with Reset around the work they measure.
type Counter struct {
	// URL is the proxy's endpoint ("http://127.0.0.1:PORT"), to be given to
	// clients instead of the emulator's.
	URL  string
	srv  *httptest.Server
	mu   sync.Mutex
	n    map[string]int
	last map[string]time.Time
}

// StartCounter starts a Counter in front of the emulator at endpoint (a URL).
// It returns an error when endpoint cannot be parsed; Close stops it.
func StartCounter(endpoint string) (*Counter, error) {
	target, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("emulator endpoint %q: %w", endpoint, err)
	}
	c := &Counter{n: map[string]int{}, last: map[string]time.Time{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	// A run's context is cancelled while its last long polls wait: not news.
	rp.ErrorLog = log.New(io.Discard, "", 0)
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := r.Header.Get("X-Amz-Target")
		if _, after, ok := strings.Cut(op, "."); ok {
			op = after
		}
		if op == "" {
			op = r.URL.Query().Get("Action")
		}
		c.mu.Lock()
		c.n[op]++
		c.mu.Unlock()
		rp.ServeHTTP(w, r)
		c.mu.Lock()
		c.last[op] = time.Now()
		c.mu.Unlock()
	}))
	c.URL = c.srv.URL
	return c, nil
}

// Close stops the proxy.
func (c *Counter) Close() { c.srv.Close() }

// Reset returns the calls counted so far, by action name, and starts again
// from zero.
func (c *Counter) Reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	c.last = map[string]time.Time{}
	return n
}

// Answered is when the proxy last finished answering a call of action op
// since the last Reset (the zero time when none was made).
func (c *Counter) Answered(op string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[op]
}

// Sum is the number of calls in n (a Reset result).
func Sum(n map[string]int) int {
	t := 0
	for _, v := range n {
		t += v
	}
	return t
}

// CallsText lists n (a Reset result) as "Action=count ..." in name order.
func CallsText(n map[string]int) string {
	keys := slices.Sorted(maps.Keys(n))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, n[k]))
	}
	return strings.Join(parts, " ")
}

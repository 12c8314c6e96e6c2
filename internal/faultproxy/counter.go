package faultproxy

import (
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Counter is a reverse proxy in front of a broker that counts the calls
// passing through it by name: what the broker was sent on the wire, for
// tests and benchmarks that check a client's call counts. Each HTTP request
// is one call; a gRPC stream counts once, when it opens.
type Counter struct {
	addr string
	srv  *http.Server
	mu   sync.Mutex
	n    map[string]int
	// last is when a call of each name last finished being answered.
	last map[string]time.Time
	// held are the names of the calls held (Hold).
	held map[string]bool
	// transport is the proxy's own transport to the endpoint, when it has
	// one; Close closes its idle connections.
	transport *http.Transport
}

// counterIdleConns is how many idle connections the SQS counting proxy
// keeps to its endpoint: more than any test or benchmark client has calls
// in flight at once.
const counterIdleConns = 64

// StartSQSCounter starts a counting HTTP proxy to an SQS (or SNS) endpoint
// (http://host:port). It counts each request by its action: the AWS JSON
// protocol's X-Amz-Target without its "AmazonSQS." prefix, or the query
// protocol's Action parameter (ReceiveMessage, DeleteMessageBatch, ...).
// It returns an error when endpoint is not a URL or no port is free.
func StartSQSCounter(endpoint string) (*Counter, error) {
	target, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("counting proxy: endpoint %q: %w", endpoint, err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	// A client's context is cancelled while its last long polls wait: not news.
	rp.ErrorLog = log.New(io.Discard, "", 0)
	// A transport of its own that keeps as many idle connections to the
	// endpoint as its clients use at once: http.DefaultTransport keeps 2,
	// so the proxy opened a new connection for most calls of a client with
	// several receives and deletes in flight (45-73 a 1,000-message consume
	// benchmark run), work charged to whichever side was being measured.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = counterIdleConns
	rp.Transport = tr
	rp.BufferPool = &copyBuffers{} // as the gRPC counter's: no 32 KB buffer made per call
	c, err := startCounter(nil, rp, func(r *http.Request) string {
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
		if op == "" {
			op = r.URL.Query().Get("Action")
		}
		return op
	})
	if err != nil {
		return nil, err
	}
	c.transport = tr
	return c, nil
}

// StartGRPCCounter starts a counting HTTP/2 (h2c, plain text) proxy to the
// gRPC server at host:port target. It counts each call by its method's own
// name, the last element of the request path (Acknowledge, StreamingPull,
// ...); a stream counts once, when it opens. It returns an error when no
// port is free.
func StartGRPCCounter(target string) (*Counter, error) {
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	u := &url.URL{Scheme: "http", Host: target}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport:     &http.Transport{Protocols: &h2c},
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
		// Without a pool the proxy makes a 32 KB copy buffer for every
		// call: a benchmark whose client makes many short calls (Pub/Sub
		// pull mode, a Pull per ten messages) had that garbage and its
		// collection charged to its side.
		BufferPool: &copyBuffers{},
	}
	return startCounter(&h2c, rp, func(r *http.Request) string {
		return r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	})
}

// copyBuffers is the counters' httputil.BufferPool: 32 KB buffers
// (the size ReverseProxy makes without a pool), reused.
type copyBuffers struct{ p sync.Pool }

// Get returns a 32 KB buffer.
func (b *copyBuffers) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

// Put keeps buf for a later Get.
func (b *copyBuffers) Put(buf []byte) { b.p.Put(&buf) }

// startCounter serves rp on a free loopback port, counting each request by
// name(r) first.
func startCounter(protocols *http.Protocols, rp http.Handler, name func(*http.Request) string) (*Counter, error) {
	c := &Counter{n: map[string]int{}, last: map[string]time.Time{}, held: map[string]bool{}}
	c.srv = &http.Server{Protocols: protocols, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := name(r)
		c.mu.Lock()
		c.n[op]++
		held := c.held[op]
		c.mu.Unlock()
		if held {
			<-r.Context().Done() // the caller gave up
			return
		}
		rp.ServeHTTP(w, r)
		c.mu.Lock()
		c.last[op] = time.Now()
		c.mu.Unlock()
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("counting proxy: listen: %w", err)
	}
	c.addr = ln.Addr().String()
	go func() { _ = c.srv.Serve(ln) }() // ends with Close
	return c, nil
}

// Hold makes the proxy hold every later call named op (counted, never
// forwarded, never answered) until its caller gives up: a broker that
// accepts that call and never answers it, while it answers the others.
func (c *Counter) Hold(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held[op] = true
}

// Addr is the proxy's host:port.
func (c *Counter) Addr() string { return c.addr }

// URL is the proxy's http:// URL.
func (c *Counter) URL() string { return "http://" + c.addr }

// Counts returns a copy of the counts so far, by call name.
func (c *Counter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// Reset returns the counts so far and starts again from zero (the
// Answered times too).
func (c *Counter) Reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	c.last = map[string]time.Time{}
	return n
}

// Answered is when the proxy last finished answering a call named op
// since the last Reset (the zero time when none was made).
func (c *Counter) Answered(op string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[op]
}

// Sum is the number of calls in n (a Counts or Reset result).
func Sum(n map[string]int) int {
	t := 0
	for _, v := range n {
		t += v
	}
	return t
}

// CallsText lists n (a Counts or Reset result) as "Name=count ..." in
// name order.
func CallsText(n map[string]int) string {
	keys := slices.Sorted(maps.Keys(n))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, n[k]))
	}
	return strings.Join(parts, " ")
}

// Close stops the proxy and closes its connections.
func (c *Counter) Close() {
	_ = c.srv.Close()
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
}

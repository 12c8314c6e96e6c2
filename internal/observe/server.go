package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Stable log texts of the server.
const (
	LogListening     = "observability listener started"
	LogServeFailed   = "observability listener failed"
	LogReaderDropped = "event stream reader too slow; records dropped"
)

// Content types of /events.
const (
	ContentTypeNDJSON = "application/x-ndjson"
	ContentTypeSSE    = "text/event-stream"
)

// keepAlive is how often an idle /events stream writes a blank line (NDJSON)
// or an SSE comment, so proxies and readers see a live connection.
const keepAlive = 10 * time.Second

// DrainInterval is how often an /events reader takes what its buffer holds
// (and so the stream's added latency). The reader buffer must hold this
// long's events: DefaultReaderBuffer covers 160,000 events a second.
const DrainInterval = 25 * time.Millisecond

// DefaultShutdownTimeout is how long a Server's stop waits for its
// connections to finish before it closes them: long enough for a scrape in
// progress and for every /events reader to be sent what is left and the end
// of its stream, short enough that a reader that does not read (its
// connection's buffers full) cannot hold the process.
const DefaultShutdownTimeout = 2 * time.Second

// SSEClosedComment is the last thing an SSE reader of /events is sent when
// the server stops: a comment (EventSource ignores it) before the end of the
// stream.
const SSEClosedComment = ": stream closed: the consumer stopped\n\n"

// Server serves /metrics, /healthz, /readyz and /events. Any of Metrics,
// Health and Stream may be nil; its endpoints then answer 404.
type Server struct {
	Metrics *Metrics
	Health  *Health
	Stream  *Stream
	Logger  *slog.Logger
	// ShutdownTimeout bounds the stop function of Start, whatever its
	// context says; zero or negative means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
}

// ListenAddr normalises a --listen value: "9464" or ":9464" becomes
// "127.0.0.1:9464" (loopback unless a host is given); "host:port" is kept.
// It returns an error, quoting addr as given, for anything that is not
// [host]:port with a numeric port (a URL such as http://host:9464 is named
// as one), and for a port outside 0..65535.
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("empty address: give a port (9464) or host:port (127.0.0.1:9464)")
	}
	given := addr // errors quote what was given, not the normalised form
	if scheme, _, ok := strings.Cut(addr, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, ":[]") {
		return "", fmt.Errorf("%q: a URL; want HOST:PORT or :PORT (127.0.0.1:9464, :9464) or a port alone (9464), with no scheme", given)
	}
	if _, err := strconv.Atoi(addr); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%q: want a port (9464) or host:port (127.0.0.1:9464): %w", given, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("%q: port %q is not a number: want HOST:PORT or :PORT (127.0.0.1:9464, :9464) or a port alone, a port from 0 to 65535", given, port)
	}
	if n < 0 || n > 65535 {
		return "", fmt.Errorf("%q: port %d is out of range: valid ports are 0 to 65535", given, n)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Handler returns the HTTP handler of the four endpoints. Its /events
// streams end only when their request does (the client goes, or the
// server's base context ends); Start's stop ends them as well.
func (s *Server) Handler() http.Handler { return s.handler(nil) }

// handler returns the mux; every /events stream ends, cleanly, once
// closing is closed (nil: never).
func (s *Server) handler(closing <-chan struct{}) http.Handler {
	mux := http.NewServeMux()
	if s.Metrics != nil {
		mux.Handle("GET /metrics", metricsHandler(s.Metrics))
	}
	mux.HandleFunc("GET /healthz", ServeHealthz)
	if s.Health != nil {
		mux.HandleFunc("GET /readyz", s.Health.ServeReadyz)
	}
	if s.Stream != nil {
		mux.HandleFunc("GET /events", func(w http.ResponseWriter, req *http.Request) { s.serveEvents(w, req, closing) })
	}
	return mux
}

// metricsHandler serves m's metrics (promhttp, which filters by name[]).
// A scrape whose name[] filter asks only for brighter_ families gathers
// m.OwnRegistry(), so it does not run the Go runtime and process
// collectors whose families the filter would drop; any other scrape
// gathers everything. The answer is the same either way.
func metricsHandler(m *Metrics) http.Handler {
	// Both handlers count their errors into one
	// promhttp_metric_handler_errors_total on the full registry (the
	// second HandlerFor finds it registered and shares it).
	all := promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{Registry: m.Registry()})
	own := promhttp.HandlerFor(m.OwnRegistry(), promhttp.HandlerOpts{Registry: m.Registry()})
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if onlyOwnFamilies(req.URL.Query()["name[]"]) {
			own.ServeHTTP(w, req)
			return
		}
		all.ServeHTTP(w, req)
	})
}

// onlyOwnFamilies reports whether names, a scrape's name[] filter, is not
// empty and names only brighter_ families.
func onlyOwnFamilies(names []string) bool {
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "brighter_") {
			return false
		}
	}
	return true
}

// Start listens on addr (after ListenAddr) and serves until ctx is done or
// stop is called. It returns the bound address ("127.0.0.1:9464"; useful
// with port 0) and a stop function.
//
// stop ends every /events stream (each reader is sent the records its
// buffer holds, an SSE reader SSEClosedComment, then the end of the
// response), stops accepting connections, and waits for the connections to
// finish (http.Server.Shutdown) until ctx ends or ShutdownTimeout has
// passed, whichever is first; then it closes what is left and returns an
// error saying so. It returns nil when every connection finished in time.
// Calls after the first find nothing left to stop.
func (s *Server) Start(ctx context.Context, addr string) (bound string, stop func(context.Context) error, err error) {
	addr, err = ListenAddr(addr)
	if err != nil {
		return "", nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	closing := make(chan struct{})
	var closeOnce sync.Once
	srv := &http.Server{Handler: s.handler(closing), ReadHeaderTimeout: 5 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	logger := s.logger()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(LogServeFailed, "addr", ln.Addr().String(), "error", err)
		}
	}()
	logger.Info(LogListening, "addr", ln.Addr().String())
	timeout := s.ShutdownTimeout
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
	stop = func(ctx context.Context) error {
		// The streams never end by themselves: end them first, so that
		// Shutdown finds their connections idle.
		closeOnce.Do(func() { close(closing) })
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			// A connection still busy (a reader that does not read): close it.
			return errors.Join(fmt.Errorf("shutdown %s within %s: %w", ln.Addr(), timeout, err), srv.Close())
		}
		return nil
	}
	return ln.Addr().String(), stop, nil
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// serveEvents streams records as NDJSON, or as Server-Sent Events when the
// request accepts text/event-stream. A reader that falls behind by more
// than the stream's buffer misses records; it is told how many with a
// KindDropped record. When closing is closed the reader is sent what its
// buffer holds (and, on SSE, SSEClosedComment) and the response ends.
func (s *Server) serveEvents(w http.ResponseWriter, req *http.Request, closing <-chan struct{}) {
	sse := strings.Contains(req.Header.Get("Accept"), ContentTypeSSE)
	rc := http.NewResponseController(w)
	if sse {
		w.Header().Set("Content-Type", ContentTypeSSE)
	} else {
		w.Header().Set("Content-Type", ContentTypeNDJSON)
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	rd := s.Stream.Subscribe()
	defer rd.Close()

	// One encoder and buffer serve the whole connection: a record costs an
	// encode into reused memory, not a fresh slice.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	wr := new(wireRecord)
	write := func(r *Record) error {
		buf.Reset()
		if sse {
			buf.WriteString("event: ")
			buf.WriteString(r.Kind)
			buf.WriteString("\ndata: ")
		}
		r.toWire(wr)
		if err := enc.Encode(wr); err != nil { // Encode ends the line
			return fmt.Errorf("encode record: %w", err)
		}
		if sse {
			buf.WriteByte('\n')
		}
		_, err := w.Write(buf.Bytes())
		return err
	}
	// The reader drains its buffer on a ticker rather than waiting on it:
	// a send into a buffer nobody waits on never wakes a goroutine, so the
	// pump's Observe stays a mutex and a channel store.
	tick := time.NewTicker(DrainInterval)
	defer tick.Stop()
	lastWrite := time.Now()
	ctx := req.Context()
	// take writes what the reader's buffer holds (after a KindDropped
	// record when it missed some) and, on an idle connection, a keep-alive;
	// it flushes when it wrote anything. It returns false when the
	// connection failed.
	take := func(now time.Time, last bool) bool {
		wrote := false
		if d := rd.TakeDropped(); d > 0 {
			s.logger().Debug(LogReaderDropped, "dropped", d, "remote", req.RemoteAddr)
			if err := write(&Record{Kind: KindDropped, Time: nowUTC(), Dropped: d}); err != nil {
				return false
			}
			wrote = true
		}
		for more := true; more; {
			select {
			case r := <-rd.C():
				if err := write(r); err != nil {
					return false
				}
				wrote = true
			default:
				more = false
			}
		}
		if last && sse {
			if _, err := io.WriteString(w, SSEClosedComment); err != nil {
				return false
			}
			wrote = true
		}
		if !wrote && now.Sub(lastWrite) >= keepAlive {
			ka := "\n"
			if sse {
				ka = ": keep-alive\n\n"
			}
			if _, err := io.WriteString(w, ka); err != nil {
				return false
			}
			wrote = true
		}
		if wrote {
			lastWrite = now
			if err := rc.Flush(); err != nil {
				return false
			}
		}
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-closing:
			// The server stops: the reader gets what is left, then a clean
			// end of the response.
			take(time.Now(), true)
			return
		case now := <-tick.C:
			if !take(now, false) {
				return
			}
		}
	}
}

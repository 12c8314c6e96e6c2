package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
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

// Server serves /metrics, /healthz, /readyz and /events. Any of Metrics,
// Health and Stream may be nil; its endpoints then answer 404.
type Server struct {
	Metrics *Metrics
	Health  *Health
	Stream  *Stream
	Logger  *slog.Logger
}

// ListenAddr normalises a --listen value: "9464" or ":9464" becomes
// "127.0.0.1:9464" (loopback unless a host is given); "host:port" is kept.
// It returns an error for anything that is not [host]:port with a numeric
// port.
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("empty address: give a port (9464) or host:port (127.0.0.1:9464)")
	}
	if _, err := strconv.Atoi(addr); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%q: want a port (9464) or host:port (127.0.0.1:9464): %w", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Handler returns the HTTP handler of the four endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	if s.Metrics != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.Metrics.Registry(), promhttp.HandlerOpts{Registry: s.Metrics.Registry()}))
	}
	mux.HandleFunc("GET /healthz", ServeHealthz)
	if s.Health != nil {
		mux.HandleFunc("GET /readyz", s.Health.ServeReadyz)
	}
	if s.Stream != nil {
		mux.HandleFunc("GET /events", s.serveEvents)
	}
	return mux
}

// Start listens on addr (after ListenAddr) and serves until ctx is done or
// stop is called. It returns the bound address ("127.0.0.1:9464"; useful
// with port 0) and a stop function that shuts the server down within ctx.
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
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	logger := s.logger()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(LogServeFailed, "addr", ln.Addr().String(), "error", err)
		}
	}()
	logger.Info(LogListening, "addr", ln.Addr().String())
	stop = func(ctx context.Context) error {
		if err := srv.Shutdown(ctx); err != nil {
			// Streams never end by themselves: close what is left.
			return errors.Join(fmt.Errorf("shutdown %s: %w", ln.Addr(), err), srv.Close())
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
// KindDropped record.
func (s *Server) serveEvents(w http.ResponseWriter, req *http.Request) {
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
	// pump's Observe stays a mutex and a channel store (issue 8).
	tick := time.NewTicker(DrainInterval)
	defer tick.Stop()
	lastWrite := time.Now()
	ctx := req.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			wrote := false
			if d := rd.TakeDropped(); d > 0 {
				s.logger().Debug(LogReaderDropped, "dropped", d, "remote", req.RemoteAddr)
				if err := write(&Record{Kind: KindDropped, Time: nowUTC(), Dropped: d}); err != nil {
					return
				}
				wrote = true
			}
			for more := true; more; {
				select {
				case r := <-rd.C():
					if err := write(r); err != nil {
						return
					}
					wrote = true
				default:
					more = false
				}
			}
			if !wrote && now.Sub(lastWrite) >= keepAlive {
				ka := "\n"
				if sse {
					ka = ": keep-alive\n\n"
				}
				if _, err := w.Write([]byte(ka)); err != nil {
					return
				}
				wrote = true
			}
			if wrote {
				lastWrite = now
				if err := rc.Flush(); err != nil {
					return
				}
			}
		}
	}
}

package rmqtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// QueuesPerTopic is how many queues each topic has (default 1).
	QueuesPerTopic int
	// MaxDeliveryAttempts is every consumer group's maximum number of
	// deliveries of one message before native dead-lettering (default
	// DefaultMaxDeliveryAttempts). SetMaxDeliveryAttempts overrides it per
	// group.
	MaxDeliveryAttempts int
	// AutoCreateTopics makes QueryRoute and SendMessage create a missing
	// topic instead of answering TOPIC_NOT_FOUND.
	AutoCreateTopics bool
	// Logger receives one Debug record per RPC; nil discards them.
	Logger *slog.Logger
}

// Server is the in-process broker. Make it with Start; it is safe for
// concurrent use.
type Server struct {
	holds  sync.Map     // RPC method -> *faultproxy.Hold (HoldCalls)
	routed atomic.Int32 // the port routes name (AdvertisePort); 0: the server's own
	opts   Options
	lis    net.Listener
	grpc   *grpc.Server
	port   int
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	topics  map[string]*topicState
	groups  map[string]*groupState
	handles map[string]handleRef
	notify  chan struct{}
	calls   map[string]int
	// hideRetryPolicy stops Telemetry answering Settings
	// (HideGroupRetryPolicy).
	hideRetryPolicy bool

	sendFault   atomic.Pointer[Fault]
	ackFault    atomic.Pointer[Fault]
	changeFault atomic.Pointer[Fault]
	recvFault   atomic.Pointer[Fault]
	routeFault  atomic.Pointer[Fault]
	delivered   atomic.Int64

	v2.UnimplementedMessagingServiceServer
}

// Start listens on 127.0.0.1 at a free port, with TLS and a self-signed
// certificate generated now, and serves until Close. It returns an error when
// the certificate cannot be made or the port cannot be opened.
func Start(opts Options) (*Server, error) {
	if opts.QueuesPerTopic <= 0 {
		opts.QueuesPerTopic = 1
	}
	if opts.MaxDeliveryAttempts <= 0 {
		opts.MaxDeliveryAttempts = DefaultMaxDeliveryAttempts
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cert, err := selfSigned()
	if err != nil {
		return nil, fmt.Errorf("rmqtest: make certificate: %w", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("rmqtest: listen: %w", err)
	}
	s := &Server{
		opts: opts, lis: lis, log: log, port: lis.Addr().(*net.TCPAddr).Port,
		topics: map[string]*topicState{}, groups: map[string]*groupState{}, handles: map[string]handleRef{},
		notify: make(chan struct{}), calls: map[string]int{},
	}
	s.grpc = grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})))
	v2.RegisterMessagingServiceServer(s.grpc, s)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		_ = s.grpc.Serve(lis)
	}()
	go func() {
		defer s.wg.Done()
		s.sweeper(ctx)
	}()
	return s, nil
}

// Endpoint is the address the client's Config.Endpoint takes
// ("127.0.0.1:port").
func (s *Server) Endpoint() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Close stops serving at once and waits for the server's goroutines.
func (s *Server) Close() {
	s.cancel()
	s.grpc.Stop()
	s.wg.Wait()
}

// Calls reports how many times an RPC was served, by its method name
// ("SendMessage", "ReceiveMessage", "AckMessage", "ChangeInvisibleDuration",
// "QueryRoute", "Heartbeat", "Telemetry").
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Delivered reports how many messages receive answers have handed out in
// all (a redelivery counts again). A test that must see nothing arrive
// checks it, because the Go client can lose an answer it was sent (ADR
// 0003), and a receive that saw nothing proves nothing then.
func (s *Server) Delivered() int { return int(s.delivered.Load()) }

func (s *Server) count(method string) {
	s.mu.Lock()
	s.calls[method]++
	s.mu.Unlock()
	s.log.Debug("rmqtest rpc", "method", method)
}

func ok() *v2.Status { return &v2.Status{Code: v2.Code_OK, Message: "OK"} }

func status(code v2.Code, format string, a ...any) *v2.Status {
	return &v2.Status{Code: code, Message: fmt.Sprintf(format, a...)}
}

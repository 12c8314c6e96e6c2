package rmqtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"log/slog"
	"math/big"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// DefaultMaxDeliveryAttempts is how many times a consumer group is given a
// message before it is dead-lettered to %DLQ%<group> (RocketMQ's default
// maximum of 16; see the package comment for how it is counted).
const DefaultMaxDeliveryAttempts = 16

// DLQPrefix prefixes a consumer group's native dead-letter topic.
const DLQPrefix = "%DLQ%"

// sweepInterval is how often lapsed messages are checked for native
// dead-lettering.
const sweepInterval = 50 * time.Millisecond

// defaultLongPoll is the long-polling timeout of a group whose Settings have
// not arrived yet and whose request carries no deadline.
const defaultLongPoll = time.Second

// clientRequestTimeout is the Go client's default request timeout, which it
// adds to the long-polling timeout to make the ReceiveMessage deadline.
const clientRequestTimeout = 3 * time.Second

// Fault makes an RPC fail on demand: a non-nil error makes the RPC answer
// INTERNAL_ERROR with the error's text, or the code of a *StatusError (an
// authentication failure, a too-large body, ...). topic and messageID name
// the message the call is about ("" for a receive or a route query).
type Fault func(topic, messageID string) error

// StatusError is an error a Fault returns to make the RPC answer Code
// instead of INTERNAL_ERROR (issue 13: UNAUTHORIZED, FORBIDDEN,
// MESSAGE_BODY_TOO_LARGE, ...), with Message as the status message.
type StatusError struct {
	Code    v2.Code
	Message string
}

func (e *StatusError) Error() string { return e.Code.String() + ": " + e.Message }

// faultStatus is the status an RPC answers for a Fault's err: the code of
// a *StatusError, else INTERNAL_ERROR with what ("injected send fault")
// and err's text.
func faultStatus(what string, err error) *v2.Status {
	var se *StatusError
	if errors.As(err, &se) {
		return status(se.Code, "%s", se.Message)
	}
	return status(v2.Code_INTERNAL_ERROR, "%s: %v", what, err)
}

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

// Message is a stored message as a test sees it.
type Message struct {
	// Topic is the topic it is stored on.
	Topic string
	// QueueID and Offset locate it.
	QueueID int32
	Offset  int64
	// MessageID is the client-made message id.
	MessageID string
	// Tag is the message's tag, "" for none.
	Tag string
	// Keys are the message's keys.
	Keys []string
	// MessageGroup is the FIFO message group, "" for none.
	MessageGroup string
	// Properties are the user properties.
	Properties map[string]string
	// Body is the payload.
	Body []byte
	// DeliveryTimestamp is when a delayed message becomes visible (zero for
	// none).
	DeliveryTimestamp time.Time
}

type stored struct {
	msg       *v2.Message
	topic     string
	queue     int32
	offset    int64
	visibleAt time.Time
	group     string
	tag       string
}

type topicState struct {
	queues [][]*stored
	rr     uint32
}

type delivery struct {
	attempts       int32
	invisibleUntil time.Time
	handle         string
	done           bool
}

type groupState struct {
	max      int
	longPoll time.Duration
	state    map[*stored]*delivery
}

type handleRef struct {
	group string
	s     *stored
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

// CreateTopic makes the topic if it does not exist.
func (s *Server) CreateTopic(name string) {
	s.mu.Lock()
	s.topicLocked(name)
	s.mu.Unlock()
}

// HasTopic reports whether the topic exists.
func (s *Server) HasTopic(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.topics[name] != nil
}

// SetMaxDeliveryAttempts sets one consumer group's maximum deliveries of a
// message before native dead-lettering (n <= 0 restores the default).
func (s *Server) SetMaxDeliveryAttempts(group string, n int) {
	if n <= 0 {
		n = s.opts.MaxDeliveryAttempts
	}
	s.mu.Lock()
	s.groupLocked(group).max = n
	s.mu.Unlock()
}

// FailSend installs (or, with nil, removes) a fault on SendMessage. The Go
// client retries a failed send up to three attempts in all.
func (s *Server) FailSend(f Fault) { s.sendFault.Store(&f) }

// FailAck installs (or removes) a fault on AckMessage. The Go client's Ack
// reports success even then (local-brokers.md §3.2); the message stays.
func (s *Server) FailAck(f Fault) { s.ackFault.Store(&f) }

// FailChangeInvisibleDuration installs (or removes) a fault on
// ChangeInvisibleDuration; the invisibility is left unchanged.
func (s *Server) FailChangeInvisibleDuration(f Fault) { s.changeFault.Store(&f) }

// FailReceive installs (or removes) a fault on ReceiveMessage: the
// receive answers the fault's status with no message (topic is the
// queue's topic, messageID "").
func (s *Server) FailReceive(f Fault) { s.recvFault.Store(&f) }

// FailQueryRoute installs (or removes) a fault on QueryRoute, which every
// client makes when it starts and every 30 s after (messageID "").
func (s *Server) FailQueryRoute(f Fault) { s.routeFault.Store(&f) }

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

// Messages returns copies of every message stored on the topic (acknowledged
// ones included: a RocketMQ topic is a log), by queue then offset.
func (s *Server) Messages(topic string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.topics[topic]
	if t == nil {
		return nil
	}
	var out []Message
	for _, q := range t.queues {
		for _, st := range q {
			out = append(out, view(st))
		}
	}
	return out
}

// Pending reports how many messages of the topic the consumer group has not
// yet acknowledged, had filtered out or had dead-lettered.
func (s *Server) Pending(topic, group string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.topics[topic]
	if t == nil {
		return 0
	}
	g := s.groupLocked(group)
	n := 0
	for _, q := range t.queues {
		for _, st := range q {
			if d := g.state[st]; d == nil || !d.done {
				n++
			}
		}
	}
	return n
}

func view(st *stored) Message {
	sp := st.msg.GetSystemProperties()
	m := Message{
		Topic: st.topic, QueueID: st.queue, Offset: st.offset, MessageID: sp.GetMessageId(), Tag: st.tag,
		Keys: slices.Clone(sp.GetKeys()), MessageGroup: st.group, Body: slices.Clone(st.msg.GetBody()),
		Properties: map[string]string{},
	}
	for k, v := range st.msg.GetUserProperties() {
		m.Properties[k] = v
	}
	if sp.GetDeliveryTimestamp() != nil {
		m.DeliveryTimestamp = sp.GetDeliveryTimestamp().AsTime()
	}
	return m
}

func (s *Server) count(method string) {
	s.mu.Lock()
	s.calls[method]++
	s.mu.Unlock()
	s.log.Debug("rmqtest rpc", "method", method)
}

func (s *Server) topicLocked(name string) *topicState {
	t := s.topics[name]
	if t == nil {
		t = &topicState{queues: make([][]*stored, s.opts.QueuesPerTopic)}
		s.topics[name] = t
	}
	return t
}

func (s *Server) groupLocked(name string) *groupState {
	g := s.groups[name]
	if g == nil {
		g = &groupState{max: s.opts.MaxDeliveryAttempts, state: map[*stored]*delivery{}}
		s.groups[name] = g
	}
	return g
}

// signalLocked wakes every long poll.
func (s *Server) signalLocked() {
	close(s.notify)
	s.notify = make(chan struct{})
}

func ok() *v2.Status { return &v2.Status{Code: v2.Code_OK, Message: "OK"} }

func status(code v2.Code, format string, a ...any) *v2.Status {
	return &v2.Status{Code: code, Message: fmt.Sprintf(format, a...)}
}

func fire(p *atomic.Pointer[Fault], topic, id string) error {
	if f := p.Load(); f != nil && *f != nil {
		return (*f)(topic, id)
	}
	return nil
}

func (s *Server) route(topic string) []*v2.MessageQueue {
	out := make([]*v2.MessageQueue, s.opts.QueuesPerTopic)
	for i := range out {
		out[i] = &v2.MessageQueue{
			Topic:      &v2.Resource{Name: topic},
			Id:         int32(i),
			Permission: v2.Permission_READ_WRITE,
			Broker: &v2.Broker{Name: "rmqtest", Id: 0, Endpoints: &v2.Endpoints{
				Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: "127.0.0.1", Port: s.routePort()}},
			}},
			AcceptMessageTypes: []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY},
		}
	}
	return out
}

// QueryRoute answers the topic's queues, all served here.
func (s *Server) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	s.count("QueryRoute")
	name := req.GetTopic().GetName()
	if err := fire(&s.routeFault, name, ""); err != nil {
		return &v2.QueryRouteResponse{Status: faultStatus("injected query-route fault", err)}, nil
	}
	s.mu.Lock()
	exists := s.topics[name] != nil
	if !exists && s.opts.AutoCreateTopics {
		s.topicLocked(name)
		exists = true
	}
	s.mu.Unlock()
	if !exists {
		return &v2.QueryRouteResponse{Status: status(v2.Code_TOPIC_NOT_FOUND, "topic %s does not exist", name)}, nil
	}
	return &v2.QueryRouteResponse{Status: ok(), MessageQueues: s.route(name)}, nil
}

// Heartbeat answers OK.
func (s *Server) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	s.count("Heartbeat")
	return &v2.HeartbeatResponse{Status: ok()}, nil
}

// Telemetry reads the client's Settings until the stream ends, recording a
// consumer group's long-polling timeout.
func (s *Server) Telemetry(stream v2.MessagingService_TelemetryServer) error {
	s.count("Telemetry")
	for {
		cmd, err := stream.Recv()
		if err != nil {
			// EOF or a client going away: either ends the stream cleanly.
			return nil
		}
		sub := cmd.GetSettings().GetSubscription()
		if sub == nil || sub.GetGroup() == nil {
			continue
		}
		s.mu.Lock()
		g := s.groupLocked(sub.GetGroup().GetName())
		if lp := sub.GetLongPollingTimeout(); lp != nil {
			g.longPoll = lp.AsDuration()
		}
		maxAttempts, hide := g.max, s.hideRetryPolicy
		s.mu.Unlock()
		if hide {
			continue
		}
		// As a RocketMQ 5 proxy does (GrpcClientSettingsManager): answer a
		// consumer's Settings with them merged with the group's retry
		// policy, whose max_attempts is the group's maximum deliveries.
		answer := proto.Clone(cmd.GetSettings()).(*v2.Settings)
		answer.BackoffPolicy = &v2.RetryPolicy{MaxAttempts: int32(maxAttempts)}
		if err := stream.Send(&v2.TelemetryCommand{Status: ok(), Command: &v2.TelemetryCommand_Settings{Settings: answer}}); err != nil {
			return nil
		}
	}
}

// HideGroupRetryPolicy makes Telemetry stop (hide true) or resume
// answering a consumer's Settings with its group's retry policy, as a proxy
// that does not report it.
func (s *Server) HideGroupRetryPolicy(hide bool) {
	s.mu.Lock()
	s.hideRetryPolicy = hide
	s.mu.Unlock()
}

// SendMessage stores each message; see the package comment.
func (s *Server) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	s.count("SendMessage")
	if h := s.held("SendMessage"); h != nil {
		return nil, h.Call(ctx)
	}
	resp := &v2.SendMessageResponse{Status: ok()}
	for _, m := range req.GetMessages() {
		topic, id := m.GetTopic().GetName(), m.GetSystemProperties().GetMessageId()
		if err := fire(&s.sendFault, topic, id); err != nil {
			st := faultStatus("injected send fault", err)
			return &v2.SendMessageResponse{Status: st, Entries: []*v2.SendResultEntry{{Status: st, MessageId: id}}}, nil
		}
		s.mu.Lock()
		if s.topics[topic] == nil && !s.opts.AutoCreateTopics {
			s.mu.Unlock()
			st := status(v2.Code_TOPIC_NOT_FOUND, "topic %s does not exist", topic)
			return &v2.SendMessageResponse{Status: st, Entries: []*v2.SendResultEntry{{Status: st, MessageId: id}}}, nil
		}
		st := s.storeLocked(topic, proto.Clone(m).(*v2.Message))
		s.signalLocked()
		s.mu.Unlock()
		resp.Entries = append(resp.Entries, &v2.SendResultEntry{Status: ok(), MessageId: id, Offset: st.offset})
	}
	return resp, nil
}

// storeLocked appends m to topic, choosing its queue, and returns it.
func (s *Server) storeLocked(topic string, m *v2.Message) *stored {
	t := s.topicLocked(topic)
	sp := m.GetSystemProperties()
	if sp == nil {
		sp = &v2.SystemProperties{}
		m.SystemProperties = sp
	}
	m.Topic = &v2.Resource{Name: topic, ResourceNamespace: m.GetTopic().GetResourceNamespace()}
	st := &stored{msg: m, topic: topic, group: sp.GetMessageGroup(), tag: sp.GetTag()}
	var q int
	if st.group != "" {
		h := fnv.New32a()
		_, _ = h.Write([]byte(st.group))
		q = int(h.Sum32() % uint32(len(t.queues)))
	} else {
		q = int(t.rr % uint32(len(t.queues)))
		t.rr++
	}
	st.queue, st.offset = int32(q), int64(len(t.queues[q]))
	if dt := sp.GetDeliveryTimestamp(); dt != nil {
		st.visibleAt = dt.AsTime()
	}
	sp.QueueId = st.queue
	off := st.offset
	sp.QueueOffset = &off
	sp.StoreTimestamp = timestamppb.Now()
	sp.StoreHost = "127.0.0.1"
	sum := crc32.ChecksumIEEE(m.GetBody())
	sp.BodyDigest = &v2.Digest{Type: v2.DigestType_CRC32, Checksum: strconv.FormatInt(int64(sum), 16)}
	sp.BodyEncoding = v2.Encoding_IDENTITY
	t.queues[q] = append(t.queues[q], st)
	return st
}

// ReceiveMessage delivers visible messages of one queue to a consumer group;
// see the package comment.
func (s *Server) ReceiveMessage(req *v2.ReceiveMessageRequest, stream v2.MessagingService_ReceiveMessageServer) error {
	s.count("ReceiveMessage")
	ctx := stream.Context()
	if h := s.held("ReceiveMessage"); h != nil {
		return h.Call(ctx)
	}
	group := req.GetGroup().GetName()
	topic := req.GetMessageQueue().GetTopic().GetName()
	queue := req.GetMessageQueue().GetId()
	send := func(st *v2.Status, msgs []*v2.Message) error {
		if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}}); err != nil {
			return err
		}
		for _, m := range msgs {
			if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := fire(&s.recvFault, topic, ""); err != nil {
		return send(faultStatus("injected receive fault", err), nil)
	}
	if group == "" {
		return send(status(v2.Code_ILLEGAL_CONSUMER_GROUP, "consumer group is empty"), nil)
	}
	fe := req.GetFilterExpression()
	if fe != nil && fe.GetType() == v2.FilterType_SQL {
		return send(status(v2.Code_ILLEGAL_FILTER_EXPRESSION, "rmqtest supports TAG filters only"), nil)
	}
	tags := parseTags(fe.GetExpression())
	invisible := req.GetInvisibleDuration().AsDuration()
	if invisible <= 0 {
		return send(status(v2.Code_ILLEGAL_INVISIBLE_TIME, "invisible duration must be positive"), nil)
	}
	batch := int(req.GetBatchSize())
	if batch <= 0 {
		batch = 1
	}

	s.mu.Lock()
	t := s.topics[topic]
	if t == nil || int(queue) < 0 || int(queue) >= len(t.queues) {
		s.mu.Unlock()
		return send(status(v2.Code_TOPIC_NOT_FOUND, "topic %s queue %d does not exist", topic, queue), nil)
	}
	g := s.groupLocked(group)
	pollEnd := s.pollEnd(ctx, g)
	s.mu.Unlock()

	for {
		s.mu.Lock()
		now := time.Now()
		msgs, next := s.deliverLocked(group, g, s.topics[topic].queues[queue], tags, batch, invisible, now)
		notify := s.notify
		s.mu.Unlock()
		if len(msgs) > 0 {
			s.delivered.Add(int64(len(msgs)))
			return send(ok(), msgs)
		}
		wait := time.Until(pollEnd)
		if wait <= 0 {
			return send(status(v2.Code_MESSAGE_NOT_FOUND, "no new message"), nil)
		}
		if !next.IsZero() && next.Sub(now) < wait {
			wait = max(next.Sub(now), time.Millisecond)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-notify:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// pollEnd is when a long poll ends: the group's long-polling timeout, bounded
// by the request deadline less the client's request timeout.
func (s *Server) pollEnd(ctx context.Context, g *groupState) time.Time {
	now := time.Now()
	end := now.Add(defaultLongPoll)
	if g.longPoll > 0 {
		end = now.Add(g.longPoll)
	}
	if dl, ok := ctx.Deadline(); ok {
		bound := dl.Add(-clientRequestTimeout)
		if g.longPoll <= 0 || bound.Before(end) {
			end = bound
		}
	}
	return end
}

// deliverLocked picks up to batch visible messages of one queue for group,
// making each invisible; next is the earliest future time at which something
// of this queue may become visible (zero for none).
func (s *Server) deliverLocked(group string, g *groupState, q []*stored, tags []string, batch int, invisible time.Duration, now time.Time) (out []*v2.Message, next time.Time) {
	blocked := map[string]bool{}
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, st := range q {
		d := g.state[st]
		if d == nil {
			d = &delivery{}
			g.state[st] = d
		}
		if d.done {
			continue
		}
		if !matchTag(tags, st.tag) {
			d.done = true
			continue
		}
		if st.group != "" && blocked[st.group] {
			continue
		}
		if now.Before(st.visibleAt) {
			later(st.visibleAt)
			if st.group != "" {
				blocked[st.group] = true
			}
			continue
		}
		if d.attempts > 0 && now.Before(d.invisibleUntil) {
			later(d.invisibleUntil)
			if st.group != "" {
				blocked[st.group] = true
			}
			continue
		}
		if int(d.attempts) >= g.max {
			s.deadLetterLocked(group, st, d)
			continue
		}
		if len(out) >= batch {
			break
		}
		if d.handle != "" {
			delete(s.handles, d.handle)
		}
		d.attempts++
		d.invisibleUntil = now.Add(invisible)
		d.handle = newHandle()
		s.handles[d.handle] = handleRef{group: group, s: st}
		m := proto.Clone(st.msg).(*v2.Message)
		sp := m.GetSystemProperties()
		h, a := d.handle, d.attempts
		sp.ReceiptHandle, sp.DeliveryAttempt = &h, &a
		sp.InvisibleDuration = nil
		out = append(out, m)
		if st.group != "" {
			blocked[st.group] = true
		}
	}
	return out, next
}

// deadLetterLocked moves st, unchanged, to %DLQ%<group>.
func (s *Server) deadLetterLocked(group string, st *stored, d *delivery) {
	d.done = true
	if d.handle != "" {
		delete(s.handles, d.handle)
		d.handle = ""
	}
	m := proto.Clone(st.msg).(*v2.Message)
	sp := m.GetSystemProperties()
	sp.DeliveryTimestamp, sp.ReceiptHandle, sp.DeliveryAttempt = nil, nil, nil
	s.storeLocked(DLQPrefix+group, m)
	s.log.Debug("rmqtest dead-lettered", "message_id", sp.GetMessageId(), "group", group, "attempts", d.attempts)
	s.signalLocked()
}

// sweeper dead-letters lapsed messages that have used up their group's
// deliveries, even when no one is receiving.
func (s *Server) sweeper(ctx context.Context) {
	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.mu.Lock()
		now := time.Now()
		for name, g := range s.groups {
			for st, d := range g.state {
				if !d.done && d.attempts > 0 && int(d.attempts) >= g.max && !now.Before(d.invisibleUntil) {
					s.deadLetterLocked(name, st, d)
				}
			}
		}
		s.mu.Unlock()
	}
}

// holdLocked finds the delivery a receipt handle still holds.
func (s *Server) holdLocked(group, handle string, now time.Time) (*stored, *delivery, *v2.Status) {
	ref, found := s.handles[handle]
	if !found || ref.group != group {
		return nil, nil, status(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is invalid or stale")
	}
	d := s.groups[group].state[ref.s]
	if d == nil || d.done || d.handle != handle {
		return nil, nil, status(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is stale")
	}
	if !now.Before(d.invisibleUntil) {
		return nil, nil, status(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is expired")
	}
	return ref.s, d, nil
}

// AckMessage removes messages for the group when their handles are current.
func (s *Server) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	s.count("AckMessage")
	if h := s.held("AckMessage"); h != nil {
		return nil, h.Call(ctx)
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	resp := &v2.AckMessageResponse{Status: ok()}
	for _, e := range req.GetEntries() {
		var st *v2.Status
		if err := fire(&s.ackFault, topic, e.GetMessageId()); err != nil {
			st = faultStatus("injected ack fault", err)
		} else {
			s.mu.Lock()
			_, d, bad := s.holdLocked(group, e.GetReceiptHandle(), time.Now())
			if bad == nil {
				d.done = true
				delete(s.handles, d.handle)
				s.signalLocked()
				st = ok()
			} else {
				st = bad
			}
			s.mu.Unlock()
		}
		if st.GetCode() != v2.Code_OK {
			resp.Status = st
		}
		resp.Entries = append(resp.Entries, &v2.AckMessageResultEntry{MessageId: e.GetMessageId(), ReceiptHandle: e.GetReceiptHandle(), Status: st})
	}
	return resp, nil
}

// ChangeInvisibleDuration resets a held message's invisibility and issues a
// new receipt handle.
func (s *Server) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	s.count("ChangeInvisibleDuration")
	if h := s.held("ChangeInvisibleDuration"); h != nil {
		return nil, h.Call(ctx)
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	if err := fire(&s.changeFault, topic, req.GetMessageId()); err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: faultStatus("injected change-invisible-duration fault", err), ReceiptHandle: req.GetReceiptHandle()}, nil
	}
	dur := req.GetInvisibleDuration().AsDuration()
	if dur < 0 {
		return &v2.ChangeInvisibleDurationResponse{Status: status(v2.Code_ILLEGAL_INVISIBLE_TIME, "invisible duration is negative"), ReceiptHandle: req.GetReceiptHandle()}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	st, d, bad := s.holdLocked(group, req.GetReceiptHandle(), now)
	if bad != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: bad, ReceiptHandle: req.GetReceiptHandle()}, nil
	}
	delete(s.handles, d.handle)
	// With 0 the message is visible at once and the new handle is already
	// expired, as on a real broker.
	d.invisibleUntil = now.Add(dur)
	d.handle = newHandle()
	s.handles[d.handle] = handleRef{group: group, s: st}
	s.signalLocked()
	return &v2.ChangeInvisibleDurationResponse{Status: ok(), ReceiptHandle: d.handle}, nil
}

func newHandle() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// parseTags reads a TAG expression ("*", "", "a || b"); nil means all.
func parseTags(expr string) []string {
	expr = strings.TrimSpace(expr)
	if expr == "" || expr == "*" {
		return nil
	}
	var out []string
	for _, t := range strings.Split(expr, "||") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func matchTag(tags []string, tag string) bool {
	return tags == nil || slices.Contains(tags, tag)
}

// selfSigned makes an ECDSA P-256 certificate for 127.0.0.1 and localhost,
// valid for a day.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "rmqtest"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

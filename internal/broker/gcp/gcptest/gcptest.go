// Package gcptest is test support for tests that run against Google's own
// Pub/Sub emulator (the Java server of the Debian package
// google-cloud-cli-pubsub-emulator): one emulator per test binary,
// started on a free loopback port by the first Start and stopped by Main;
// Start gives each test its own project on it and a client, and Faults makes
// that client's unary calls fail on demand, before they reach the emulator.
//
// Typical use:
//
//	func TestMain(m *testing.M) { os.Exit(gcptest.Main(m)) }
//
//	f := &gcptest.Faults{}
//	client, srv := gcptest.Start(t, "orders", f, gcp.Connect)
//	// names: "projects/" + srv.Project + "/topics/..."
//	f.FailAcknowledge(true)
//
// The emulator runs in a process group of its own under a small shell
// watchdog (the group's leader) whose standard input is a pipe only the
// test binary holds. When the test binary ends without stopping it (go test
// -timeout, a CI job's SIGKILL, a panic), the kernel closes that pipe and
// the watchdog SIGKILLs the whole group at once: no orphaned JVM keeps its
// port and memory (TestStartEmulator_EndsWithItsKilledTestBinary).
//
// This package is for tests only. Package gcp's own tests use it, so it
// cannot use package gcp: Start takes the connect function as an argument.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/gcp
//
// Imported by: internal/cmd/cmdtest, internal/cmd/dlq/dlqtest
package gcptest

import (
	"context"
	"fmt"
	"path"
	"sync"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/faultproxy"
)

// Faults is a fault-injecting gRPC unary client interceptor. Each fault is
// off in the zero value and can be switched on and off at any time, from any
// goroutine, while the client is in use. An injected fault fails the call
// with gRPC code PermissionDenied (which the Pub/Sub client does not retry)
// and never sends it to the emulator.
type Faults struct {
	publishTopic atomic.Pointer[string]
	publishErr   atomic.Pointer[topicFault]
	pull         atomic.Pointer[error]
	stream       atomic.Pointer[error]
	byMethod     sync.Map // last path segment -> error
	ack          atomic.Bool
	refuseAck    atomic.Bool
	modAck       atomic.Bool
	calls        sync.Map // full method name -> *atomic.Int64
	cutOff       sync.Map // full method name -> *atomic.Int64 (CutOff)
	holds        sync.Map // last path segment -> *faultproxy.Hold (HoldCalls)
	ackMu        sync.Mutex
	ackIDs       []int // ack ids of each AcknowledgeRequest (AckIDsPerCall)
}

// AckIDsPerCall returns how many ack ids each AcknowledgeRequest that went
// through the interceptor carried, in the order they were made (injected
// faults included).
func (f *Faults) AckIDsPerCall() []int {
	f.ackMu.Lock()
	defer f.ackMu.Unlock()
	return append([]int(nil), f.ackIDs...)
}

// Calls returns how many unary calls of method (its last path segment, as
// "UpdateSubscription") went through the interceptor, injected faults
// included.
func (f *Faults) Calls(method string) int64 {
	var n int64
	f.calls.Range(func(k, v any) bool {
		if path.Base(k.(string)) == method {
			n += v.(*atomic.Int64).Load()
		}
		return true
	})
	return n
}

// CutOff returns how many unary calls of method (its last path segment)
// ended after their context had ended: a call cut off by its own deadline
// (or cancelled) before the emulator's answer reached the client, injected
// holds included.
func (f *Faults) CutOff(method string) int64 {
	var n int64
	f.cutOff.Range(func(k, v any) bool {
		if path.Base(k.(string)) == method {
			n += v.(*atomic.Int64).Load()
		}
		return true
	})
	return n
}

// FailPublishTo makes every Publish to topic, a full topic name
// ("projects/P/topics/T"), fail with "injected publish fault". An empty
// topic stops the fault; publishes to other topics are never affected.
func (f *Faults) FailPublishTo(topic string) { f.publishTopic.Store(&topic) }

// topicFault is a publish fault on one topic with its own status.
type topicFault struct {
	topic string
	err   error
}

// FailPublishWith makes every Publish to topic (a full topic name) fail
// with err, a gRPC status error such as status.Error(codes.InvalidArgument,
// "...") (a publish the service refuses as it is). A nil err
// stops it. It is independent of FailPublishTo.
func (f *Faults) FailPublishWith(topic string, err error) {
	f.publishErr.Store(&topicFault{topic: topic, err: err})
}

// FailCall makes every unary call of method (its last path segment, as
// "GetTopic") fail with err, a gRPC status error; nil stops it.
func (f *Faults) FailCall(method string, err error) {
	if err == nil {
		f.byMethod.Delete(method)
		return
	}
	f.byMethod.Store(method, err)
}

// FailPull makes every Pull fail with err (a gRPC status error, e.g.
// Unauthenticated); nil stops it.
func (f *Faults) FailPull(err error) { f.pull.Store(&err) }

// FailStreamingPull makes every new StreamingPull stream fail with err at
// once (InterceptStream); nil stops it. A stream already open is not cut.
func (f *Faults) FailStreamingPull(err error) { f.stream.Store(&err) }

// InterceptStream is the grpc.StreamClientInterceptor that applies
// FailStreamingPull; every other stream is opened unchanged.
func (f *Faults) InterceptStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	n, _ := f.calls.LoadOrStore(method, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	if path.Base(method) == "StreamingPull" {
		if e := f.stream.Load(); e != nil && *e != nil {
			return nil, *e
		}
	}
	return streamer(ctx, desc, cc, method, opts...)
}

// FailAcknowledge switches on (true) or off (false) the failure of every
// Acknowledge call, with "injected acknowledge fault".
func (f *Faults) FailAcknowledge(on bool) { f.ack.Store(on) }

// RefuseAcknowledge switches on (true) or off (false) the refusal of
// every Acknowledge call as an exactly-once delivery subscription refuses
// an ack id whose deadline lapsed (what Google's emulator answers then):
// InvalidArgument with an ErrorInfo of reason EXACTLY_ONCE_ACKID_FAILURE
// mapping each ack id of the call to PERMANENT_FAILURE_INVALID_ACK_ID.
func (f *Faults) RefuseAcknowledge(on bool) { f.refuseAck.Store(on) }

// FailModifyAckDeadline switches on (true) or off (false) the failure of
// every ModifyAckDeadline call (a nack or a lease extension), with
// "injected modifyAckDeadline fault".
func (f *Faults) FailModifyAckDeadline(on bool) { f.modAck.Store(on) }

// Intercept is the grpc.UnaryClientInterceptor that applies the faults
// switched on at the time of the call; any other call is passed to invoker
// unchanged.
func (f *Faults) Intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) (err error) {
	n, _ := f.calls.LoadOrStore(method, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	defer func() {
		if err != nil && ctx.Err() != nil {
			c, _ := f.cutOff.LoadOrStore(method, new(atomic.Int64))
			c.(*atomic.Int64).Add(1)
		}
	}()
	if e, ok := f.byMethod.Load(path.Base(method)); ok {
		return e.(error)
	}
	if h, ok := f.holds.Load(path.Base(method)); ok {
		return h.(*faultproxy.Hold).Call(ctx)
	}
	switch r := req.(type) {
	case *pubsubpb.PublishRequest:
		if t := f.publishTopic.Load(); t != nil && *t != "" && r.Topic == *t {
			return status.Error(codes.PermissionDenied, "injected publish fault")
		}
		if t := f.publishErr.Load(); t != nil && t.err != nil && r.Topic == t.topic {
			return t.err
		}
	case *pubsubpb.PullRequest:
		if e := f.pull.Load(); e != nil && *e != nil {
			return *e
		}
	case *pubsubpb.AcknowledgeRequest:
		f.ackMu.Lock()
		f.ackIDs = append(f.ackIDs, len(r.AckIds))
		f.ackMu.Unlock()
		if f.ack.Load() {
			return status.Error(codes.PermissionDenied, "injected acknowledge fault")
		}
		if f.refuseAck.Load() {
			md := make(map[string]string, len(r.AckIds))
			for _, id := range r.AckIds {
				md[id] = "PERMANENT_FAILURE_INVALID_ACK_ID"
			}
			st, err := status.New(codes.InvalidArgument, "").WithDetails(&errdetails.ErrorInfo{Reason: "EXACTLY_ONCE_ACKID_FAILURE", Domain: "pubsub.googleapis.com", Metadata: md})
			if err != nil {
				return fmt.Errorf("gcptest: build the exactly-once refusal: %w", err)
			}
			return st.Err()
		}
	case *pubsubpb.ModifyAckDeadlineRequest:
		if f.modAck.Load() {
			return status.Error(codes.PermissionDenied, "injected modifyAckDeadline fault")
		}
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// ConnectFunc makes a Pub/Sub client for project with opts; gcp.Connect is
// the one the callers pass.
type ConnectFunc func(ctx context.Context, project string, opts ...option.ClientOption) (*pubsub.Client, error)

// Server is what Start gives a test: the shared emulator's address and the
// test's own project on it.
type Server struct {
	// Addr is the emulator's gRPC address (host:port), for a config's
	// connections.gcp.emulatorHost or PUBSUB_EMULATOR_HOST.
	Addr string
	// Project is the project id this test owns on the emulator: prefix, a
	// hyphen and a number unique in the test binary, so tests (parallel
	// ones too) never see each other's topics, subscriptions or counters.
	Project string
}

// projects numbers the projects handed out by Start.
var projects atomic.Int64

// Start gives the test its own project on the test binary's Google Pub/Sub
// emulator (Shared: started on first use, stopped by Main), dials it
// without transport security through f's interceptor (no interceptor when f
// is nil), and connects a client for that project with connect, passing the
// connection and option.WithTelemetryDisabled. prefix starts the project id
// (a lowercase letter first, at most 20 characters, as the service
// requires). An emulator that cannot start (not installed, see InstallHint)
// or a dial or connect error fails tb at once: there is no skip. tb's
// cleanup closes the client and the connection.
func Start(tb testing.TB, prefix string, f *Faults, connect ConnectFunc) (*pubsub.Client, *Server) {
	tb.Helper()
	return StartVia(tb, prefix, f, connect, nil)
}

// StartVia is Start with the client's connection made to via(emulator
// address) instead of the emulator itself: a test puts a
// faultproxy.Proxy in front of the emulator (a black-holed connection)
// and returns the proxy's address. A nil via dials the emulator. The
// Server's Addr is still the emulator's.
func StartVia(tb testing.TB, prefix string, f *Faults, connect ConnectFunc, via func(emulator string) string) (*pubsub.Client, *Server) {
	tb.Helper()
	emu, err := Shared()
	if err != nil {
		tb.Fatalf("Pub/Sub emulator: %v", err)
	}
	srv := &Server{Addr: emu.Addr, Project: fmt.Sprintf("%s-%d", prefix, projects.Add(1))}
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if f != nil {
		dial = append(dial, grpc.WithUnaryInterceptor(f.Intercept), grpc.WithStreamInterceptor(f.InterceptStream))
	}
	target := srv.Addr
	if via != nil {
		target = via(srv.Addr)
	}
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		tb.Fatalf("dial the Pub/Sub emulator at %s: %v", target, err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	client, err := connect(context.Background(), srv.Project, option.WithGRPCConn(conn), option.WithTelemetryDisabled())
	if err != nil {
		tb.Fatalf("connect to the Pub/Sub emulator: %v", err)
	}
	tb.Cleanup(func() { _ = client.Close() })
	return client, srv
}

package lint_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/root"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/transport"
)

// lookupTimeout is the look-up deadline these tests give lint --live
// (transport.RocketMQ.LookupTimeout, transport.GCP.LookupTimeout): well
// under the RocketMQ client library's own 5s dial timeout and 3s request
// timeout, and the Pub/Sub client's 60s call timeout, so a look-up that
// ignored it would show.
const lookupTimeout = 400 * time.Millisecond

// lintLiveCutOff runs `brighter lint --live --live-timeout 10s -o json
// path` with RocketMQ and Pub/Sub look-ups cut off after lookupTimeout,
// and returns its stdout, its live-check-failed findings and how long it
// took.
func lintLiveCutOff(t *testing.T, path string) (string, []liveFinding, time.Duration) {
	t.Helper()
	io, out, errOut := cmdtest.FakeIO("", false)
	f := factory.New(io, "", "")
	f.Transports = func() transport.Registry {
		r := transport.Default()
		r[config.TransportRocketMQ] = transport.RocketMQ{LookupTimeout: lookupTimeout}
		r[config.TransportGCP] = &transport.GCP{LookupTimeout: lookupTimeout}
		return r
	}
	start := time.Now()
	root.Run(context.Background(), f, []string{"lint", "--live", "--live-timeout", "10s", "-o", "json", path})
	took := time.Since(start)
	var rep struct {
		Findings []liveFinding `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s\nstderr:\n%s", err, out, errOut)
	}
	var failed []liveFinding
	for _, fd := range rep.Findings {
		if fd.Rule == lint.RuleLiveCheckFailed {
			failed = append(failed, fd)
		}
	}
	return out.String(), failed, took
}

// notAskedAfterCutOff checks the report of a run of two subscriptions,
// orders and refunds, on an endpoint that let its first look-up run out
// or refused its connection: the report says the lint did not complete,
// exactly one finding, orders' (naming what), says why (cutOff: the
// endpoint and what became of the look-up), and every other one that it
// was not asked; it returns how many were not asked.
func notAskedAfterCutOff(t *testing.T, out string, failed []liveFinding, cutOff, what string) (later int) {
	t.Helper()
	if !strings.Contains(out, `"incomplete": "--live could not check 2 subscription(s)`) {
		t.Errorf("the report does not say the lint did not complete:\n%s", out)
	}
	const notAsked = "not asked: an earlier look-up there got no answer: "
	first := 0
	for _, fd := range failed {
		switch {
		case strings.Contains(fd.Message, notAsked+cutOff):
			later++
		case strings.Contains(fd.Message, cutOff):
			first++
			if fd.Subscription != "orders" || !strings.Contains(fd.Message, what) {
				t.Errorf("the look-up cut off is not orders' %q: %+v", what, fd)
			}
		default:
			t.Errorf("finding neither cut off nor not asked, naming the endpoint: %+v", fd)
		}
	}
	if first != 1 {
		t.Errorf("%d look-ups cut off, want 1: %+v", first, failed)
	}
	return later
}

// rocketmqFile writes a subscriptions file of the subscriptions orders
// and refunds, each with makeChannels: validate, on the RocketMQ proxy at
// endpoint, and returns its path.
func rocketmqFile(t *testing.T, endpoint string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := "connections:\n  rocketmq:\n    endpoint: " + endpoint + "\nsubscriptions:\n"
	for _, q := range []string{"orders", "refunds"} {
		yaml += "  - name: " + q + "\n    transport: rocketmq\n    channelName: " + q + "\n    routingKey: " + q +
			"\n    makeChannels: validate\n    rocketmq: {consumerGroup: " + q + "-consumers}\n    handler: {type: builtin, name: ack}\n"
	}
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLintLive_SilentRocketMQEndpointIsCutOffNamingIt runs `lint --live`
// on a file of two RocketMQ subscriptions whose proxy (a listener of the
// test) accepts connections and never answers. The first look-up (the
// consumer group's maximum delivery attempts) is cut off at the look-up deadline,
// not at the client library's own dial timeout (5s) nor at --live-timeout;
// its finding names the endpoint, where it came from, the deadline and
// that the look-up was cut off; every later look-up there (the channel
// validation, the second subscription) is not asked but fails at once with
// that error; and the report says the lint did not complete.
func TestLintLive_SilentRocketMQEndpointIsCutOffNamingIt(t *testing.T) {
	b := cmdtest.NewSilentBroker(t)
	out, failed, took := lintLiveCutOff(t, rocketmqFile(t, b.Addr))
	// One deadline and the run's own work; the library's 5s dial would
	// exceed it once.
	if bound := 3 * time.Second; took > bound {
		t.Errorf("lint --live took %v on a silent RocketMQ proxy, want at most %v (one look-up deadline of %v)", took, bound, lookupTimeout)
	}
	cutOff := "RocketMQ at " + b.Addr + " (connections.rocketmq.endpoint in the subscriptions file) did not answer within " + lookupTimeout.String() + ": the look-up was cut off"
	// orders: the group (cut off) and the channels; refunds: both.
	if later := notAskedAfterCutOff(t, out, failed, cutOff, "consumer group orders-consumers"); later != 3 {
		t.Errorf("%d look-ups not asked, want 3: %+v", later, failed)
	}
}

// TestLintLive_RefusingRocketMQEndpointSaysRefusedAtOnce runs `lint
// --live` on a file of two RocketMQ subscriptions whose endpoint refuses
// connections (a port just closed). The first look-up's finding says the
// endpoint refused the connection (not that the look-up was cut off at its
// deadline), naming it and where it came from; every later look-up there
// is not asked; and the report says the lint did not complete.
func TestLintLive_RefusingRocketMQEndpointSaysRefusedAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // the port now refuses connections
	out, failed, _ := lintLiveCutOff(t, rocketmqFile(t, addr))
	refused := "RocketMQ at " + addr + " (connections.rocketmq.endpoint in the subscriptions file) refused the connection"
	if later := notAskedAfterCutOff(t, out, failed, refused, "consumer group orders-consumers"); later != 3 {
		t.Errorf("%d look-ups not asked, want 3: %+v", later, failed)
	}
}

// TestLintLive_RocketMQChannelValidationIsCutOff: on the RocketMQ test
// broker holding every route query (QueryRoute), which the channel
// validation's producer start-up makes, while it answers the group's
// settings, lint --live reads the group's maximum delivery attempts and cuts the
// channel validation off at the look-up deadline, not at the client
// library's 3s request timeout; its finding names the endpoint and the
// deadline, and the second subscription's validation is not asked.
func TestLintLive_RocketMQChannelValidationIsCutOff(t *testing.T) {
	srv, err := rmqtest.Start(rmqtest.Options{})
	if err != nil {
		t.Fatalf("start the RocketMQ test broker: %v", err)
	}
	t.Cleanup(srv.Close)
	srv.CreateTopic("orders")
	srv.CreateTopic("refunds")
	srv.HoldCalls("QueryRoute")
	out, failed, took := lintLiveCutOff(t, rocketmqFile(t, srv.Endpoint()))
	if bound := 2500 * time.Millisecond; took > bound {
		t.Errorf("lint --live took %v on a proxy holding route queries, want at most %v (one look-up deadline of %v)", took, bound, lookupTimeout)
	}
	cutOff := "RocketMQ at " + srv.Endpoint() + " (connections.rocketmq.endpoint in the subscriptions file) did not answer within " + lookupTimeout.String() + ": the look-up was cut off"
	bySub := map[string]string{}
	for _, fd := range failed {
		if !strings.Contains(fd.Message, "could not look its channels up on the broker") {
			t.Errorf("a look-up other than the channel validation failed: %+v", fd)
		}
		bySub[fd.Subscription] = fd.Message
	}
	if m := bySub["orders"]; !strings.Contains(m, cutOff) || strings.Contains(m, "not asked") {
		t.Errorf("orders' validation: %q, want it cut off naming the endpoint (%s)", m, cutOff)
	}
	if m := bySub["refunds"]; !strings.Contains(m, "not asked: an earlier look-up there got no answer: "+cutOff) {
		t.Errorf("refunds' validation: %q, want it not asked", m)
	}
	if !strings.Contains(out, `"incomplete"`) {
		t.Errorf("the report does not say the lint did not complete:\n%s", out)
	}
}

// TestLintLive_SilentPubSubCallIsCutOffNamingIt runs `lint --live` on a
// file of two Pub/Sub subscriptions whose endpoint (a proxy in front of
// Google's emulator) answers the start-up probe but never answers
// GetSubscription. The first GetSubscription (orders' native limit) is cut
// off at the look-up deadline, not at the client's 60s call timeout nor
// at --live-timeout; its finding names the endpoint, where it came from,
// the deadline and that the look-up was cut off; every later call there
// fails at once, not asked; and the report says the lint did not
// complete.
func TestLintLive_SilentPubSubCallIsCutOffNamingIt(t *testing.T) {
	client, srv := gcptest.Start(t, "lintcut", nil, gcp.Connect)
	ctx := context.Background()
	for _, n := range []string{"orders", "refunds"} {
		topic := "projects/" + srv.Project + "/topics/" + n
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: "projects/" + srv.Project + "/subscriptions/" + n + "-sub", Topic: topic}); err != nil {
			t.Fatal(err)
		}
	}
	proxy, err := faultproxy.StartGRPCCounter(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	proxy.Hold("GetSubscription")
	path := filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := "connections:\n  gcp:\n    projectId: " + srv.Project + "\n    emulatorHost: " + proxy.Addr() + "\nsubscriptions:\n"
	for _, n := range []string{"orders", "refunds"} {
		yaml += "  - name: " + n + "\n    transport: gcp\n    channelName: " + n + "-sub\n    routingKey: " + n +
			"\n    makeChannels: validate\n    requeueCount: -1\n    handler: {type: builtin, name: ack}\n"
	}
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	out, failed, took := lintLiveCutOff(t, path)
	// One deadline, the probe and the run's own work.
	if bound := 3 * time.Second; took > bound {
		t.Errorf("lint --live took %v on a Pub/Sub endpoint that does not answer GetSubscription, want at most %v (one look-up deadline of %v)", took, bound, lookupTimeout)
	}
	cutOff := "Pub/Sub at " + proxy.Addr() + " (connections.gcp.emulatorHost in the subscriptions file) did not answer within " + lookupTimeout.String() + ": the look-up was cut off"
	if later := notAskedAfterCutOff(t, out, failed, cutOff, "could not read its native limit"); later < 1 {
		t.Errorf("no look-up not asked after the cut-off: %+v", failed)
	}
	if n := proxy.Counts()["GetSubscription"]; n != 1 {
		t.Errorf("the endpoint was asked GetSubscription %d times, want once (not again after it did not answer)", n)
	}
}

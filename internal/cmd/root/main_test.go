package root

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/prometheus/procfs"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/message"
)

// TestScripts runs testdata/scripts/*.txtar: the CLI as a user runs it
// (flags, exit codes, output, signals).
//
// Scripts that need SQS find the fauxqs emulator (started here, once, on
// 127.0.0.1) through AWS_ENDPOINT_URL; a script that does not use it pays
// nothing but the start-up.
func TestScripts(t *testing.T) {
	t.Parallel() // each script runs in parallel with the others, and with this package's other parallel tests
	runScripts(t, "../../../testdata/scripts")
}

// runScripts runs the scripts of dir with fauxqs and a RocketMQ test broker.
func runScripts(t *testing.T, dir string) {
	emu := cmdtest.SharedSQS(t)
	rmq, err := rmqtest.Start(rmqtest.Options{AutoCreateTopics: true})
	if err != nil {
		t.Fatalf("start the RocketMQ test broker: %v", err)
	}
	t.Cleanup(rmq.Close)
	// Google's Pub/Sub emulator (shared by the binary's tests), in a project
	// of the scripts' own: PUBSUB_ADDR (for emulatorHost or --endpoint) and
	// PUBSUB_PROJECT; topics
	// and subscriptions are made with pubsub-create.
	psClient, ps := gcptest.Start(t, "scripts", nil, gcp.Connect)
	hole := blackHole(t)
	refuser := expiredTokenProxy(t, emu.Endpoint)
	receiveFails := receiveFailsProxy(t, emu.Endpoint)
	testscript.Run(t, testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitCode,
			"waitfile":  cmdWaitFile,
			"pidgone":   cmdPidGone,
			"groupgone": cmdGroupGone,
			"pubsub-create": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdPubSubCreate(ts, neg, args, psClient, ps.Project)
			},
			"pubsub-deadletter": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdPubSubDeadLetter(ts, neg, args, psClient)
			},
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			// dlq replay's journal, never under testscript's HOME.
			env.Setenv("XDG_STATE_HOME", env.WorkDir+"/.state")
			env.Setenv("AWS_ENDPOINT_URL", emu.Endpoint)
			env.Setenv("AWS_REGION", sqstest.Region)
			env.Setenv("AWS_ACCESS_KEY_ID", "test")
			env.Setenv("AWS_SECRET_ACCESS_KEY", "test")
			env.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			env.Setenv("RMQ_ENDPOINT", rmq.Endpoint())
			env.Setenv("PUBSUB_ADDR", ps.Addr)
			env.Setenv("PUBSUB_PROJECT", ps.Project)
			env.Setenv("BLACKHOLE", hole)
			env.Setenv("SQS_EXPIRED_PROXY", refuser)
			env.Setenv("SQS_RECEIVE_FAILS_PROXY", receiveFails)
			// Each script gets queue names of its own: fauxqs is shared.
			env.Setenv("RUN", fmt.Sprintf("r%d", time.Now().UnixNano()%1e9))
			return nil
		},
	})
}

// expiredTokenProxy is HTTP middleware in front of fauxqs (which checks no
// credentials): a request signed with the session token "expired" is
// answered as AWS answers an expired one (400, ExpiredToken); any
// other request is passed to fauxqs at target. It returns the proxy's URL.
func expiredTokenProxy(t *testing.T, target string) string {
	t.Helper()
	return answeringProxy(t, target, func(r *http.Request) bool { return r.Header.Get("X-Amz-Security-Token") == "expired" },
		http.StatusBadRequest, "ExpiredToken;Sender",
		`{"__type":"com.amazon.coral.service#ExpiredTokenException","message":"The security token included in the request is expired"}`)
}

// receiveFailsProxy is HTTP middleware in front of fauxqs at target that
// answers every ReceiveMessage with a 500 InternalError and passes every
// other call (GetQueueUrl included) to fauxqs (a dlq command
// there must fail, never report an empty queue). It returns the proxy's URL.
func receiveFailsProxy(t *testing.T, target string) string {
	t.Helper()
	return answeringProxy(t, target, func(r *http.Request) bool { return r.Header.Get("X-Amz-Target") == "AmazonSQS.ReceiveMessage" },
		http.StatusInternalServerError, "InternalError;Receiver",
		`{"__type":"com.amazon.coral.service#InternalError","message":"injected: every receive fails"}`)
}

// answeringProxy is HTTP middleware in front of fauxqs at target: a request
// match chooses is answered with status, the x-amzn-query-error queryError
// and the JSON body, as SQS answers an error; any other request is passed
// to fauxqs. It returns the proxy's URL; it closes when t ends.
func answeringProxy(t *testing.T, target string, match func(*http.Request) bool, status int, queryError, body string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("fauxqs endpoint %q: %v", target, err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !match(r) {
			proxy.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("x-amzn-query-error", queryError)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// blackHole is the host:port of a listener that accepts every connection
// and never answers on it (faultproxy.Silent), closed when t ends.
func blackHole(t *testing.T) string {
	t.Helper()
	return faultproxy.NewSilent(t).Addr
}

// cmdExitCode is the testscript command `exitcode N prog args...`: it runs
// prog and fails unless it exits with code N; stdout and stderr are kept for
// the following stdout/stderr checks.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// cmdPubSubCreate is `pubsub-create TOPIC [SUBSCRIPTION...]`: it makes the
// topic and its subscriptions (60s ack deadline) in the scripts' project on
// Google's emulator.
func cmdPubSubCreate(ts *testscript.TestScript, neg bool, args []string, c *pubsub.Client, project string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: pubsub-create TOPIC [SUBSCRIPTION...]")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := "projects/" + project + "/topics/" + args[0]
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
		ts.Fatalf("pubsub-create topic %s: %v", args[0], err)
	}
	for _, sub := range args[1:] {
		if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name: "projects/" + project + "/subscriptions/" + sub, Topic: topic, AckDeadlineSeconds: 60,
		}); err != nil {
			ts.Fatalf("pubsub-create subscription %s: %v", sub, err)
		}
	}
}

// cmdPubSubDeadLetter is `pubsub-deadletter TOPIC ID ORIGINALTOPIC REASON
// MESSAGE`: it publishes to TOPIC a routed copy of a command message ID
// whose rejection metadata says it came from ORIGINALTOPIC and was rejected
// for REASON with MESSAGE, as brighter's routing writes it.
func cmdPubSubDeadLetter(ts *testscript.TestScript, neg bool, args []string, c *pubsub.Client) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: pubsub-deadletter TOPIC ID ORIGINALTOPIC REASON MESSAGE")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reason, ok := message.ParseRejectionReason(args[3])
	if !ok {
		ts.Fatalf("pubsub-deadletter: reason %q: want None, Unacceptable or DeliveryError", args[3])
	}
	m := message.New(args[1], args[2], message.MTCommand, []byte(`{}`))
	m = message.Stamp(m, args[0], message.Rejection{Reason: reason, Description: args[4]}, time.Now())
	if err := gcp.NewProducer(c, gcp.ProducerOptions{}).Send(ctx, m); err != nil {
		ts.Fatalf("pubsub-deadletter: %v", err)
	}
}

// cmdWaitFile is the testscript command `waitfile NAME [TIMEOUT]`: it waits
// until the file NAME exists (a handler writes it), polling every 20 ms, and
// fails after TIMEOUT (default 60s). Scripts use it instead of sleeping for a
// guessed time before they signal a background consume.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfile NAME [TIMEOUT]")
	}
	timeout := time.Minute
	if len(args) == 2 {
		d, err := time.ParseDuration(args[1])
		if err != nil {
			ts.Fatalf("waitfile: %v", err)
		}
		timeout = d
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile: %s did not appear within %s", args[0], timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdPidGone is the testscript command `pidgone FILE [TIMEOUT]`: FILE holds
// a process id (a handler wrote it); it waits until no such process exists,
// polling every 20 ms, and fails after TIMEOUT (default 10s). Scripts use it
// to prove a handler's process was killed.
func cmdPidGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: pidgone FILE [TIMEOUT]")
	}
	timeout := 10 * time.Second
	if len(args) == 2 {
		d, err := time.ParseDuration(args[1])
		if err != nil {
			ts.Fatalf("pidgone: %v", err)
		}
		timeout = d
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	if err != nil || pid <= 0 {
		ts.Fatalf("pidgone: %s holds no process id: %v", args[0], err)
	}
	deadline := time.Now().Add(timeout)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			ts.Fatalf("pidgone: process %d still exists after %s", pid, timeout)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not a wait for a condition
	}
}

// cmdGroupGone is the testscript command `groupgone FILE`: FILE holds a
// process group id (a handler wrote its $$: the exec handler runs each
// command as the leader of a group of its own); it fails at once if any
// process of that group is alive (a zombie awaiting its reaper is not).
// Linux only (it reads /proc).
func cmdGroupGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: groupgone FILE")
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	if err != nil || pgid <= 0 {
		ts.Fatalf("groupgone: %s holds no process group id: %v", args[0], err)
	}
	if syscall.Kill(-pgid, 0) != nil {
		return
	}
	fs, err := procfs.NewDefaultFS()
	ts.Check(err)
	procs, err := fs.AllProcs()
	ts.Check(err)
	for _, p := range procs {
		s, err := p.Stat()
		if err != nil {
			continue
		}
		if s.PGRP == pgid && s.State != "Z" {
			ts.Fatalf("groupgone: process %d of group %d is alive (state %s)", p.PID, pgid, s.State)
		}
	}
}

// zombie reports whether pid is a dead process not yet reaped (state Z in
// /proc/PID/stat on Linux): an orphan whose new parent has not waited for it
// yet still answers kill(pid, 0). Elsewhere it reports false.
func zombie(pid int) bool {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return false
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return false
	}
	s, err := p.Stat()
	return err == nil && s.State == "Z"
}

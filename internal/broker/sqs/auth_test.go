package sqs

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
)

// expiredToken is HTTP middleware in front of fauxqs (which checks no
// credentials) that, while on, answers the chosen operations as AWS answers
// an expired session token (400, ExpiredToken).
type expiredToken struct {
	inner aws.HTTPClient
	ops   map[string]bool
	on    atomic.Bool
}

func (e *expiredToken) Do(r *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	if !e.on.Load() || !e.ops[op] {
		return e.inner.Do(r)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("x-amzn-query-error", "ExpiredToken;Sender")
	body := `{"__type":"com.amazon.coral.service#ExpiredTokenException","message":"The security token included in the request is expired"}`
	return &http.Response{StatusCode: http.StatusBadRequest, Status: "400 Bad Request", Header: h, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// TestRefusedCredentials_AreNotAuthorizedAtStartUpAndFatalOnReceive:
// credentials SQS refuses (ExpiredToken) are classified
// broker.ErrNotAuthorized, never a channel failure: at start-up Resolve fails
// with one error naming the endpoint and the credential source (consume exits 1
// on it), and a receive refused later is a fatal receive (the pump stops)
// rather than a back-off for ever.
func TestRefusedCredentials_AreNotAuthorizedAtStartUpAndFatalOnReceive(t *testing.T) {
	t.Parallel()
	ex := &expiredToken{inner: awshttp.NewBuildableClient(), ops: map[string]bool{"GetQueueUrl": true, "ReceiveMessage": true}}
	cfg := sqstest.Config()
	cfg.HTTPClient = ex
	c := newClients(cfg, endpoint, "the test's endpoint", nil, 0)
	if _, err := c.CheckCredentials(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	q := uniq("expired")
	if err := NewChannelMaker(testClients(t), ChannelOptions{Queue: q}).EnsureChannels(context.Background()); err != nil {
		t.Fatal(err)
	}
	k, err := NewConsumer(c, ConsumerOptions{Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	ex.on.Store(true)
	err = k.Resolve(context.Background())
	want := "SQS at " + endpoint + " (the test's endpoint) refused the credentials from "
	if !errors.Is(err, broker.ErrNotAuthorized) || errors.Is(err, broker.ErrChannelFailure) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "ExpiredToken") {
		t.Fatalf("Resolve = %v; want ErrNotAuthorized, no channel failure, naming %q", err, want)
	}
	ex.on.Store(false)
	if err := k.Resolve(context.Background()); err != nil {
		t.Fatalf("Resolve with the credentials accepted: %v", err)
	}
	ex.on.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := k.Receive(ctx, time.Second); !errors.Is(err, broker.ErrNotAuthorized) || errors.Is(err, broker.ErrChannelFailure) {
		t.Fatalf("Receive = %v; want ErrNotAuthorized and no channel failure (a fatal receive)", err)
	}
}

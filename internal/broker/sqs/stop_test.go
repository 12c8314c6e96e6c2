package sqs

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/pump/pumptest"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// pollSignal is an HTTP client that tells wrote once a ReceiveMessage
// request has been written to the emulator: its long poll is then waiting
// on the broker's side.
type pollSignal struct {
	inner aws.HTTPClient
	wrote chan struct{}
}

func (p *pollSignal) Do(r *http.Request) (*http.Response, error) {
	if r.Header.Get("X-Amz-Target") == "AmazonSQS.ReceiveMessage" {
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
			select {
			case p.wrote <- struct{}{}:
			default:
			}
		}}))
	}
	return p.inner.Do(r)
}

// TestStopDuringLongPoll_MessageNotLeftInvisible_NFR8: a consumer is
// stopped while its long poll waits on an empty queue, and a message is
// sent right after. On SQS (and fauxqs) a long poll whose client went away
// can still take that message and leave it invisible for the visibility
// timeout, a delivery spent; the pump therefore lets the poll end. What it
// brought is handed to the handler while the drain lasts (handled once and
// acknowledged), or, when the drain has already ended, released so that it
// is receivable at once after the stop; in both variants (ADR 0004).
func TestStopDuringLongPoll_MessageNotLeftInvisible_NFR8(t *testing.T) {
	for _, tc := range []struct {
		name    string
		drain   time.Duration
		handled bool
	}{{"drained", 10 * time.Second, true}, {"released", time.Millisecond, false}} {
		for _, v := range pumptest.Variants {
			t.Run(tc.name+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				c := testClients(t)
				q := uniq("stop-" + string(v))
				ps := &pollSignal{inner: awshttp.NewBuildableClient(), wrote: make(chan struct{}, 1)}
				cfg := sqstest.Config()
				cfg.HTTPClient = ps
				k := setup(t, NewClientsFromConfig(cfg, endpoint), ChannelOptions{Queue: q}, ConsumerOptions{VisibilityTimeout: time.Minute})
				handled := make(chan string, 2)
				p, err := pump.New(k, func(_ context.Context, m *message.Message) pump.Result {
					handled <- m.Header.MessageID
					return pump.Result{Outcome: pump.Ack}
				}, pump.Options{Subscription: "stop", Variant: v, TimeOut: 2 * time.Second, RequeueCount: 3, DrainTimeout: tc.drain})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- p.Run(ctx) }()
				select {
				case <-ps.wrote:
				case <-time.After(10 * time.Second):
					t.Fatal("no long poll reached the emulator")
				}
				cancel()
				m := newMessage(q)
				send(t, c, ProducerOptions{}, m)
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("Run = %v", err)
					}
				case <-time.After(15 * time.Second):
					t.Fatal("the pump did not stop")
				}
				reader, err := NewConsumer(c, ConsumerOptions{Queue: q})
				if err != nil {
					t.Fatal(err)
				}
				if !tc.handled {
					select {
					case id := <-handled:
						t.Fatalf("%s was handled after the drain ended", id)
					default:
					}
					// Visible at once: a plain receive gets it well inside the
					// minute-long visibility timeout it would otherwise sit out.
					got := receiveOne(t, reader, 5*time.Second)
					if got.Header.MessageID != m.Header.MessageID {
						t.Fatalf("received %s, want %s", got.Header.MessageID, m.Header.MessageID)
					}
					return
				}
				// The poll may end empty, the message arriving after it: then
				// it was never received and is on the queue, visible.
				select {
				case id := <-handled:
					if id != m.Header.MessageID {
						t.Fatalf("handled %s, want %s", id, m.Header.MessageID)
					}
					if len(handled) != 0 {
						t.Fatal("handled twice")
					}
					ms, err := reader.Receive(context.Background(), time.Second)
					if err != nil || len(ms) != 0 {
						t.Fatalf("after the drain the queue gives %d messages (%v), want none: the message was acknowledged", len(ms), err)
					}
				default:
					got := receiveOne(t, reader, 5*time.Second)
					if got.Header.MessageID != m.Header.MessageID {
						t.Fatalf("received %s, want %s", got.Header.MessageID, m.Header.MessageID)
					}
				}
			})
		}
	}
}

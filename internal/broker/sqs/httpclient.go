package sqs

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// bodyShield is the HTTP client under both API clients. It hands the
// transport its own in-memory copy of each request body, so the SDK closing
// its body early cannot make the transport fail the request afterwards.
//
// Why: aws-sdk-go-v2 (smithy-go) closes a request's body once the response
// headers are in, while net/http's write loop may still read that body once
// more to check it has ended. That read fails, and the write loop closes
// the connection under the response being read: "deserialization failed
// ... use of closed network connection" (aws/aws-sdk-go-v2 issues #1825 and
// #2737). The SDK then retries the call, and for a ReceiveMessage the
// messages the lost answer carried stay invisible for the visibility
// timeout and have their ApproximateReceiveCount raised: a delivery of the
// budget spent with no handler run, and a peek or replay scan that
// misses them. Seen here about once per 1,500 requests on fauxqs. Bodies of
// these APIs are small (at most 256 KiB per message, ten per batch), so the
// copy is cheap.
type bodyShield struct {
	inner aws.HTTPClient
}

// Do sends r with a body the SDK does not own. It returns the inner
// client's result, or an error when the SDK's body cannot be read.
//
// The body is read into one buffer of the size the request declares
// (ContentLength; grown as needed when it is wrong or unknown), and the
// request handed on is a shallow copy of r with that body: the transport
// reads r's header and URL and never changes them, and the SDK's r keeps
// its own body, which it closes.
func (s bodyShield) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return s.inner.Do(r)
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	b := buf.Bytes()
	c := r.WithContext(r.Context())
	c.Body = io.NopCloser(bytes.NewReader(b))
	c.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	c.ContentLength = int64(len(b))
	return s.inner.Do(c)
}

// Timeouts of the default HTTP client: a broker that accepts a
// connection and never answers must fail the call, not hold it for ever.
// The pump's own deadlines (receive: timeOut plus a margin; settle:
// callTimeout) cut calls off first; these bound calls made without one
// (dlq, send, lint --live, channel making).
const (
	// DialTimeout bounds a TCP connect.
	DialTimeout = 5 * time.Second
	// TLSHandshakeTimeout bounds a TLS handshake.
	TLSHandshakeTimeout = 5 * time.Second
	// ResponseHeaderTimeout bounds the wait for a response once the request
	// is written: the longest long poll (20 s) plus a margin.
	ResponseHeaderTimeout = MaxWait + 10*time.Second
)

// withTimeouts returns the SDK's buildable client c with the timeouts above.
func withTimeouts(c *awshttp.BuildableClient) aws.HTTPClient {
	return c.
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = DialTimeout }).
		WithTransportOptions(func(t *http.Transport) {
			t.TLSHandshakeTimeout = TLSHandshakeTimeout
			t.ResponseHeaderTimeout = ResponseHeaderTimeout
		})
}

// shielded returns cfg with its HTTP client (the SDK's default when none)
// wrapped in bodyShield; the SDK's buildable client (what
// LoadDefaultConfig installs) gets the timeouts above.
func shielded(cfg aws.Config) aws.Config {
	inner := cfg.HTTPClient
	switch c := inner.(type) {
	case nil:
		inner = withTimeouts(awshttp.NewBuildableClient())
	case *awshttp.BuildableClient:
		inner = withTimeouts(c)
	}
	cfg.HTTPClient = bodyShield{inner: inner}
	return cfg
}

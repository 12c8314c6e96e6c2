package handler

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/pump"
)

// recorded is what a test server saw of one request.
type recorded struct {
	method string
	header http.Header
	body   string
}

// server starts an httptest server that records each request and answers
// with reply.
func server(t *testing.T, reply http.HandlerFunc) (*httptest.Server, func() []recorded) {
	t.Helper()
	var mu sync.Mutex
	var reqs []recorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, recorded{r.Method, r.Header.Clone(), string(b)})
		mu.Unlock()
		reply(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []recorded {
		mu.Lock()
		defer mu.Unlock()
		return append([]recorded(nil), reqs...)
	}
}

func status(code int, hdr ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.WriteHeader(code)
	}
}

func jsonReply(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

func mustHTTP(t *testing.T, opts HTTPOptions) pump.Handler {
	t.Helper()
	h, err := HTTP(opts)
	if err != nil {
		t.Fatalf("HTTP: %v", err)
	}
	return h
}

// The request carries the body as sent, the CloudEvents binary-mode headers,
// the Brighter headers (the delivery count, R-1), trace context and the
// configured headers.
func TestHTTP_RequestHeadersAndBody_R1(t *testing.T) {
	srv, reqs := server(t, status(http.StatusOK))
	h := mustHTTP(t, HTTPOptions{URL: srv.URL + "/orders", Headers: map[string]string{"Authorization": "Bearer s3cret", "ce-id": "overridden?"}})
	m := testMessage(2)
	m.Header.Subject = "order/42"
	m.Header.DataSchema = "https://schemas.example/order.json"
	if r := h(context.Background(), m); r.Outcome != pump.Ack || r.Err != nil {
		t.Fatalf("%+v", r)
	}
	got := reqs()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	req := got[0]
	if req.method != http.MethodPost || req.body != `{"order":42}` {
		t.Fatalf("%s %q", req.method, req.body)
	}
	want := map[string]string{
		"Content-Type":            m.Header.ContentType,
		"Authorization":           "Bearer s3cret",
		"Ce-Id":                   m.Header.MessageID,
		"Ce-Type":                 "brighter.MT_COMMAND",
		"Ce-Source":               m.Header.Source,
		"Ce-Specversion":          "1.0",
		"Ce-Time":                 "2025-03-04T05:06:07.890Z",
		"Ce-Subject":              "order/42",
		"Ce-Dataschema":           "https://schemas.example/order.json",
		"Brighter-Handled-Count":  "2",
		"Brighter-Topic":          "orders",
		"Brighter-Correlation-Id": "corr-1",
		"Brighter-Message-Type":   "MT_COMMAND",
		"Brighter-Partition-Key":  "customer-7",
		"Traceparent":             m.Header.TraceParent,
		"Tracestate":              m.Header.TraceState,
		"Baggage":                 m.Header.Baggage,
	}
	for k, v := range want {
		if vs := req.header.Values(k); len(vs) != 1 || vs[0] != v {
			t.Errorf("%s = %q, want %q", k, vs, v)
		}
	}
	if _, err := time.Parse(time.RFC3339, req.header.Get("Ce-Time")); err != nil {
		t.Errorf("ce-time is not RFC 3339: %v", err)
	}
}

func TestHTTP_HeaderVariants(t *testing.T) {
	srv, reqs := server(t, status(http.StatusNoContent))
	h := mustHTTP(t, HTTPOptions{URL: srv.URL})
	m := testMessage(0)
	m.Header.Type = "com.example.order.placed"
	m.Header.Topic = "ordres-é\n\"%"
	m.Header.TraceParent, m.Header.TraceState, m.Header.Baggage = "", "", ""
	m.Header.CorrelationID, m.Header.PartitionKey = "", ""
	m.Header.Timestamp = time.Time{}
	if r := h(context.Background(), m); r.Outcome != pump.Ack {
		t.Fatalf("%+v", r)
	}
	hdr := reqs()[0].header
	if hdr.Get("Ce-Type") != "com.example.order.placed" {
		t.Errorf("ce-type = %q", hdr.Get("Ce-Type"))
	}
	// CloudEvents HTTP binding: non-printable, non-ASCII, '"' and '%' are
	// percent-encoded.
	if got := hdr.Get("Brighter-Topic"); got != "ordres-%C3%A9%0A%22%25" {
		t.Errorf("Brighter-Topic = %q", got)
	}
	for _, k := range []string{"Traceparent", "Tracestate", "Baggage", "Brighter-Correlation-Id", "Brighter-Partition-Key", "Ce-Time", "Ce-Subject"} {
		if _, ok := hdr[k]; ok {
			t.Errorf("%s sent although the message has none", k)
		}
	}
}

func TestHTTP_StatusSelectsOutcome(t *testing.T) {
	cases := []struct {
		code    int
		outcome pump.Outcome
		err     bool
	}{
		{200, pump.Ack, false},
		{201, pump.Ack, false},
		{204, pump.Ack, false},
		{429, pump.Defer, false},
		{503, pump.Defer, false},
		{400, pump.Unacceptable, false},
		{415, pump.Unacceptable, false},
		{422, pump.Unacceptable, false},
		{404, pump.Defer, true},
		{409, pump.Defer, true},
		{500, pump.Defer, true},
		{502, pump.Defer, true},
		{307, pump.Defer, true},
	}
	for _, c := range cases {
		t.Run(strconv.Itoa(c.code), func(t *testing.T) {
			logger, lb := newTestLogger()
			srv, _ := server(t, status(c.code, "Location", "/elsewhere"))
			r := mustHTTP(t, HTTPOptions{URL: srv.URL, Logger: logger})(context.Background(), testMessage(0))
			if r.Outcome != c.outcome || (r.Err != nil) != c.err {
				t.Fatalf("status %d: %+v, want %v err %v", c.code, r, c.outcome, c.err)
			}
			if c.outcome == pump.Unacceptable && !strings.Contains(r.Reason, strconv.Itoa(c.code)) {
				t.Fatalf("status %d: reason %q does not name the status", c.code, r.Reason)
			}
			if c.err {
				rec := lb.find(t, msgHTTPFailed)
				if rec["message_id"] != testMessage(0).Header.MessageID || rec["status"] != float64(c.code) {
					t.Fatalf("failure log = %v", rec)
				}
			}
		})
	}
}

// A plain-text reply's last line joins the reason, which becomes the
// rejectionMessage.
func TestHTTP_UnacceptableReasonFromTextReply_R18(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = io.WriteString(w, "validation failed\ntotal must be positive\n")
	})
	r := mustHTTP(t, HTTPOptions{URL: srv.URL})(context.Background(), testMessage(0))
	if r.Outcome != pump.Unacceptable || r.Reason != "HTTP 422 Unprocessable Entity: total must be positive" {
		t.Fatalf("%+v", r)
	}
}

func TestHTTP_RetryAfterSetsDelay(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name       string
		code       int
		retryAfter string
		min, max   time.Duration
	}{
		{"seconds-429", 429, "7", 7 * time.Second, 7 * time.Second},
		{"seconds-503", 503, "120", 2 * time.Minute, 2 * time.Minute},
		{"http-date", 503, date, 80 * time.Second, 90 * time.Second},
		{"past-date", 503, "Wed, 21 Oct 2015 07:28:00 GMT", 0, 0},
		{"garbage", 429, "soon", 0, 0},
		{"absent", 429, "", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := server(t, status(c.code, "Retry-After", c.retryAfter))
			r := mustHTTP(t, HTTPOptions{URL: srv.URL})(context.Background(), testMessage(0))
			if r.Outcome != pump.Defer || r.Err != nil || r.Delay < c.min || r.Delay > c.max {
				t.Fatalf("%+v, want Defer with delay in [%s, %s]", r, c.min, c.max)
			}
		})
	}
}

func TestHTTP_JSONReplyOverridesStatus_R18(t *testing.T) {
	cases := []struct {
		name    string
		code    int
		body    string
		outcome pump.Outcome
		reason  string
		delay   time.Duration
		err     bool
	}{
		{"ack-over-500", 500, `{"outcome":"ack"}`, pump.Ack, "", 0, false},
		{"reject-over-200", 200, `{"outcome":"reject","reason":"customer closed"}`, pump.Reject, "customer closed", 0, false},
		{"unacceptable-over-200", 200, `{"outcome":"Unacceptable","reason":"bad schema"}`, pump.Unacceptable, "bad schema", 0, false},
		{"reject-without-reason", 200, `{"outcome":"reject"}`, pump.Reject, "http handler replied reject", 0, false},
		{"defer-duration", 200, `{"outcome":"defer","delay":"5s"}`, pump.Defer, "", 5 * time.Second, false},
		{"defer-seconds", 200, `{"outcome":"defer","delay":2.5}`, pump.Defer, "", 2500 * time.Millisecond, false},
		{"defer-bad-delay", 200, `{"outcome":"defer","delay":"later"}`, pump.Defer, "", 0, false},
		{"unknown-outcome", 200, `{"outcome":"explode"}`, pump.Defer, "", 0, true},
		{"no-outcome-uses-status", 422, `{"error":"x"}`, pump.Unacceptable, "HTTP 422 Unprocessable Entity", 0, false},
		{"not-an-object-uses-status", 200, `[1,2]`, pump.Ack, "", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := server(t, jsonReply(c.code, c.body))
			r := mustHTTP(t, HTTPOptions{URL: srv.URL})(context.Background(), testMessage(0))
			if r.Outcome != c.outcome || r.Reason != c.reason || r.Delay != c.delay || (r.Err != nil) != c.err {
				t.Fatalf("%+v, want %v reason %q delay %s err %v", r, c.outcome, c.reason, c.delay, c.err)
			}
		})
	}
}

// A JSON-looking body without the JSON content type is not an override.
func TestHTTP_ReplyNeedsJSONContentType(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, `{"outcome":"reject"}`)
	})
	if r := mustHTTP(t, HTTPOptions{URL: srv.URL})(context.Background(), testMessage(0)); r.Outcome != pump.Ack {
		t.Fatalf("%+v", r)
	}
}

func TestHTTP_LargeReplyIsBounded(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"outcome":"reject","reason":"`+strings.Repeat("r", 2*MaxReply)+`"}`)
	})
	r := mustHTTP(t, HTTPOptions{URL: srv.URL})(context.Background(), testMessage(0))
	// Cut at MaxReply the JSON is incomplete: it is no override, and the
	// status (200) decides.
	if r.Outcome != pump.Ack {
		t.Fatalf("%+v", r)
	}
}

// hangingServer answers no request until the request is cancelled or the
// test ends.
func hangingServer(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	return srv
}

func TestHTTP_TimeoutDefers(t *testing.T) {
	srv := hangingServer(t)
	start := time.Now()
	r := mustHTTP(t, HTTPOptions{URL: srv.URL, Timeout: 200 * time.Millisecond})(context.Background(), testMessage(0))
	if r.Outcome != pump.Defer || r.Err == nil || !strings.Contains(r.Err.Error(), "timed out") {
		t.Fatalf("%+v", r)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("returned after %s", el)
	}
}

// A request cut off by the stop (its context cancelled) defers and is
// logged at Info, not as an http failure at Error.
func TestHTTP_CutOffByStopLogsInfo(t *testing.T) {
	srv := hangingServer(t)
	logger, lb := newTestLogger()
	h := mustHTTP(t, HTTPOptions{URL: srv.URL, Timeout: time.Minute, Logger: logger})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	r := h(ctx, testMessage(0))
	if r.Outcome != pump.Defer || r.Err == nil {
		t.Fatalf("%+v", r)
	}
	lb.cutOffAtInfo(t, msgHTTPCutOff)
}

func TestHTTP_ConnectionRefusedDefers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	r := mustHTTP(t, HTTPOptions{URL: "http://" + addr + "/"})(context.Background(), testMessage(0))
	if r.Outcome != pump.Defer || r.Err == nil || !strings.Contains(r.Err.Error(), "refused") {
		t.Fatalf("%+v", r)
	}
}

// One client with keep-alives serves every call.
func TestHTTP_ReusesConnections(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	h := mustHTTP(t, HTTPOptions{URL: srv.URL})
	for range 5 {
		if r := h(context.Background(), testMessage(0)); r.Outcome != pump.Ack {
			t.Fatalf("%+v", r)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 5 sequential calls, want 1", n)
	}
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestHTTP_TLSWithCAFile(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted handshake below is expected
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	writePEM(t, ca, "CERTIFICATE", srv.Certificate().Raw)

	if r := mustHTTP(t, HTTPOptions{URL: srv.URL, TLS: TLSOptions{CAFile: ca}})(context.Background(), testMessage(0)); r.Outcome != pump.Ack || r.Err != nil {
		t.Fatalf("with the CA file: %+v", r)
	}
	// Without it the server is not trusted: a failure, deferred.
	if r := mustHTTP(t, HTTPOptions{URL: srv.URL})(context.Background(), testMessage(0)); r.Outcome != pump.Defer || r.Err == nil {
		t.Fatalf("without the CA file: %+v", r)
	}
	if r := mustHTTP(t, HTTPOptions{URL: srv.URL, TLS: TLSOptions{InsecureSkipVerify: true}})(context.Background(), testMessage(0)); r.Outcome != pump.Ack {
		t.Fatalf("insecure: %+v", r)
	}
}

func TestHTTP_MutualTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "brighter-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, caFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"), filepath.Join(dir, "ca.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	clientCert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(clientCert)

	var peer atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			peer.Store(r.TLS.PeerCertificates[0].Subject.CommonName)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	writePEM(t, caFile, "CERTIFICATE", srv.Certificate().Raw)

	r := mustHTTP(t, HTTPOptions{URL: srv.URL, TLS: TLSOptions{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}})(context.Background(), testMessage(0))
	if r.Outcome != pump.Ack || peer.Load() != "brighter-client" {
		t.Fatalf("%+v, peer %v", r, peer.Load())
	}
	// Without the client certificate the server refuses the handshake.
	r = mustHTTP(t, HTTPOptions{URL: srv.URL, TLS: TLSOptions{CAFile: caFile}})(context.Background(), testMessage(0))
	if r.Outcome != pump.Defer || r.Err == nil {
		t.Fatalf("without a client certificate: %+v", r)
	}
}

func TestHTTP_ConfigErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "x.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]HTTPOptions{
		"no url":             {},
		"relative url":       {URL: "/orders"},
		"ftp url":            {URL: "ftp://example.com/x"},
		"bad header name":    {URL: "http://x", Headers: map[string]string{"Bad Name": "v"}},
		"bad header value":   {URL: "http://x", Headers: map[string]string{"X-A": "a\nb"}},
		"missing ca file":    {URL: "https://x", TLS: TLSOptions{CAFile: filepath.Join(dir, "none.pem")}},
		"ca file not pem":    {URL: "https://x", TLS: TLSOptions{CAFile: notPEM}},
		"cert without key":   {URL: "https://x", TLS: TLSOptions{CertFile: notPEM}},
		"unreadable keypair": {URL: "https://x", TLS: TLSOptions{CertFile: notPEM, KeyFile: notPEM}},
	} {
		if _, err := HTTP(opts); err == nil {
			t.Errorf("%s: HTTP succeeded", name)
		}
	}
}

// TestRetryAfter_ReadsSecondsOrDateAndIgnoresBadValues: a Retry-After of
// delay-seconds or an HTTP date gives that delay; zero, negative and
// overflowing values give none.
func TestRetryAfter_ReadsSecondsOrDateAndIgnoresBadValues(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"0": 0, "-3": 0, " 4 ": 4 * time.Second, "99999999999999999999": 0,
		now.Add(time.Minute).Format(http.TimeFormat): time.Minute,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}

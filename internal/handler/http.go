package handler

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
)

// Headers the http handler sends besides the CloudEvents ones.
const (
	HeaderHandledCount  = "Brighter-Handled-Count"
	HeaderTopic         = "Brighter-Topic"
	HeaderCorrelationID = "Brighter-Correlation-Id"
	HeaderMessageType   = "Brighter-Message-Type"
	HeaderPartitionKey  = "Brighter-Partition-Key"
	// HeaderTraceParent, HeaderTraceState and HeaderBaggage carry W3C trace
	// context, sent only when the message has a value.
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
	HeaderBaggage     = "baggage"
)

// MaxReply bounds how much of a reply body the http handler reads, in bytes.
const MaxReply = 1 << 20

// Stable log message texts of the http handler.
const (
	msgHTTPOK           = "http handler succeeded"
	msgHTTPDeferred     = "http handler deferred the message"
	msgHTTPRejected     = "http handler rejected the message"
	msgHTTPUnacceptable = "http handler marked the message unacceptable"
	msgHTTPFailed       = "http handler failed"
	// msgHTTPCutOff is logged at Info, not Error, when the request is
	// cancelled because the pump's stop cut the handler off.
	msgHTTPCutOff       = "http handler cut off by the stop; request cancelled"
	msgHTTPBadDelay     = "http handler reply has an invalid delay; ignoring it"
	msgHTTPDroppedTrace = "http handler dropped a trace header that is not a valid header value"
)

// TLSOptions configures the http handler's TLS client.
type TLSOptions struct {
	// CAFile is a PEM file of CA certificates trusted in addition to the
	// system pool.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and key for mutual
	// TLS; give both or neither.
	CertFile string
	KeyFile  string
	// InsecureSkipVerify turns off server certificate verification (tests
	// and demos only).
	InsecureSkipVerify bool
}

func (t TLSOptions) isZero() bool { return t == TLSOptions{} }

// HTTPOptions configures HTTP.
type HTTPOptions struct {
	// URL is the endpoint each message is POSTed to (http or https).
	URL string
	// Headers are sent with every request (for example Authorization),
	// already environment-expanded by the config loader. The CloudEvents and
	// Brighter headers are set after them and win.
	Headers map[string]string
	// Timeout bounds one request, reply included; 0 or less means
	// DefaultTimeout.
	Timeout time.Duration
	// TLS configures the client's TLS; ignored when Client is given.
	TLS TLSOptions
	// Client, when not nil, is used as it is instead of the handler's own
	// client (tests).
	Client *http.Client
	// Logger receives outcomes and failures; nil discards them.
	Logger *slog.Logger
	// Redactor is the run's: its secrets (every secret of the
	// subscriptions file, the AWS keys of the environment) are masked in
	// the handler's errors, logs and reasons as well as the handler's own.
	// nil means the handler's own secrets only.
	Redactor *redact.Redactor
}

// Reply is the optional JSON reply body of an http handler endpoint. When the
// reply's Content-Type is application/json and the object has "outcome", it
// overrides the status code.
type Reply struct {
	// Outcome is ack, defer, reject or unacceptable.
	Outcome string `json:"outcome"`
	// Reason explains a reject or unacceptable outcome; it becomes the
	// rejectionMessage.
	Reason string `json:"reason,omitempty"`
	// Delay is the requeue delay of a defer: a Go duration ("5s", "1m30s")
	// or a number of seconds.
	Delay json.RawMessage `json:"delay,omitempty"`
}

// HTTP returns a handler that POSTs each message's body, as sent, to
// opts.URL, with Content-Type from the header, the CloudEvents HTTP
// binary-mode headers (ce-id, ce-type: the header's Type or
// "brighter.<MessageType>", ce-source, ce-specversion, ce-time in RFC 3339,
// and ce-subject and ce-dataschema when set), the Brighter-* headers (the
// delivery count is Brighter-Handled-Count, R-1) and traceparent, tracestate
// and baggage when the message carries them. The ce-* values are
// percent-encoded as the CloudEvents HTTP protocol binding requires
// (CEHeaderValue: space, '"', '%' and every byte outside printable ASCII),
// so leading and trailing spaces and non-ASCII text reach the endpoint
// whole; other header values outside printable ASCII are percent-encoded
// the same way, spaces kept.
//
// The handler's errors, logs and reasons never show its secrets: the URL
// is written as redact.Endpoint writes it (scheme, host and port; path,
// user-info and query values masked), and every header value, every part
// of the URL redact.URLSecrets gives and every secret of opts.Redactor is
// masked wherever a reply or error repeats it.
//
// The reply selects the outcome: 2xx Ack; 429 and 503 Defer with the
// Retry-After delay (seconds or an HTTP date); 400, 415 and 422
// Unacceptable; any other status, a timeout or a connection error Defer with
// Result.Err set. A JSON Reply overrides the status. At most MaxReply bytes
// of a reply are read. One client with keep-alive connections serves every
// call.
//
// HTTP returns an error for a URL that is not absolute http(s), and for TLS
// files that cannot be read or parsed.
func HTTP(opts HTTPOptions) (pump.Handler, error) {
	u, err := url.Parse(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("http handler: url %s: %s", redact.Quote(redact.Endpoint(opts.URL)), redact.Text(strings.ReplaceAll(err.Error(), opts.URL, redact.Endpoint(opts.URL))))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("http handler: url %s: want an absolute http:// or https:// URL", redact.Quote(redact.Endpoint(opts.URL)))
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	headers := make(http.Header, len(opts.Headers))
	host := ""
	for k, v := range opts.Headers {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("http handler: header name %s is not valid", redact.Quote(k))
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return nil, fmt.Errorf("http handler: header %s: value is not a valid header value", redact.Quote(k))
		}
		if strings.EqualFold(k, "Host") {
			host = v
			continue
		}
		headers.Set(k, v)
	}
	client := opts.Client
	if client == nil {
		client, err = newClient(opts.TLS)
		if err != nil {
			return nil, err
		}
	}
	// The handler's own secrets: every header value it sends and
	// the URL's user-info and query values never appear in its errors, logs
	// or the rejection message they become.
	red := &redact.Redactor{}
	for _, v := range opts.Headers {
		red.Add(v)
	}
	red.Add(redact.URLSecrets(opts.URL)...)
	red.Include(opts.Redactor)
	h := &httpHandler{
		url:     u.String(),
		logURL:  redact.Endpoint(u.String()),
		red:     red,
		host:    host,
		headers: headers,
		timeout: opts.Timeout,
		client:  client,
		log:     orDiscard(opts.Logger),
	}
	return h.handle, nil
}

// newClient builds the handler's own client: a keep-alive transport with the
// TLS settings, and redirects not followed (a redirected POST would lose its
// body or change its method).
func newClient(o TLSOptions) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	if !o.isZero() {
		cfg, err := tlsConfig(o)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// tlsConfig builds a client TLS configuration from o.
func tlsConfig(o TLSOptions) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // opt-in for tests and demos
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("http handler: tls ca file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("http handler: tls ca file %s: no PEM certificates found", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("http handler: tls: certFile and keyFile must be given together")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("http handler: tls client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

type httpHandler struct {
	url     string
	logURL  string
	red     *redact.Redactor
	host    string
	headers http.Header
	timeout time.Duration
	client  *http.Client
	log     *slog.Logger
}

func (h *httpHandler) handle(ctx context.Context, m *message.Message) pump.Result {
	reqCtx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()

	attrs := []slog.Attr{slog.String("message_id", m.Header.MessageID), slog.String("url", h.logURL)}
	fail := func(err error) pump.Result {
		err = redactedError{err: err, text: h.red.String(err.Error())}
		level, msg := slog.LevelError, msgHTTPFailed
		if ctx.Err() != nil {
			level, msg = slog.LevelInfo, msgHTTPCutOff
		}
		h.log.LogAttrs(ctx, level, msg, append(attrs, slog.String("error", err.Error()))...)
		return pump.Result{Outcome: pump.Defer, Err: err}
	}

	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, h.url, bytes.NewReader(m.Body))
	if err != nil {
		return fail(fmt.Errorf("http handler: request: %w", err))
	}
	if h.host != "" {
		req.Host = h.host
	}
	h.setHeaders(ctx, req.Header, m)

	start := time.Now()
	resp, err := h.client.Do(req)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		// net/http quotes the request URL, query and all (it strips only
		// the password).
		ue.URL = h.logURL
	}
	if err != nil {
		if reqCtx.Err() != nil && ctx.Err() == nil {
			return fail(fmt.Errorf("http handler: POST %s: timed out after %s: %w", h.logURL, h.timeout, err))
		}
		return fail(fmt.Errorf("http handler: POST %s: %w", h.logURL, err))
	}
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, MaxReply))
	_ = resp.Body.Close()
	attrs = append(attrs, slog.Int("status", resp.StatusCode), slog.Duration("elapsed", time.Since(start)))
	if readErr != nil {
		return fail(fmt.Errorf("http handler: POST %s: %s: reading reply: %w", h.logURL, resp.Status, readErr))
	}

	res, overridden, err := h.replyResult(ctx, m, resp.Header, body)
	if err != nil {
		return fail(fmt.Errorf("http handler: POST %s: %s: %w", h.logURL, resp.Status, err))
	}
	if !overridden {
		res = statusResult(resp, body)
	}
	// A reply that echoes the request (a proxy's error page) must not carry
	// a secret into the rejection message.
	res.Reason = h.red.String(res.Reason)
	if res.Outcome == pump.Defer && res.Delay <= 0 {
		res.Delay = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	if res.Err != nil {
		return fail(fmt.Errorf("http handler: POST %s: %w", h.logURL, res.Err))
	}
	switch res.Outcome {
	case pump.Ack:
		h.log.LogAttrs(ctx, slog.LevelDebug, msgHTTPOK, attrs...)
	case pump.Defer:
		h.log.LogAttrs(ctx, slog.LevelWarn, msgHTTPDeferred, append(attrs, slog.Duration("delay", res.Delay), slog.String("reason", res.Reason))...)
	case pump.Reject:
		h.log.LogAttrs(ctx, slog.LevelWarn, msgHTTPRejected, append(attrs, slog.String("reason", res.Reason))...)
	case pump.Unacceptable:
		h.log.LogAttrs(ctx, slog.LevelWarn, msgHTTPUnacceptable, append(attrs, slog.String("reason", res.Reason))...)
	}
	return res
}

// setHeaders writes the configured, CloudEvents, Brighter and trace headers
// for m into hdr.
func (h *httpHandler) setHeaders(ctx context.Context, hdr http.Header, m *message.Message) {
	for k, v := range h.headers {
		hdr[k] = append([]string(nil), v...)
	}
	mh := &m.Header
	if mh.ContentType != "" {
		hdr.Set("Content-Type", headerValue(mh.ContentType))
	}
	ceType := mh.Type
	if ceType == "" {
		ceType = "brighter." + mh.MessageType.String()
	}
	set := func(k, v string) { hdr.Set(k, CEHeaderValue(v)) }
	set("ce-id", mh.MessageID)
	set("ce-type", ceType)
	set("ce-source", or(mh.Source, message.DefaultSource))
	set("ce-specversion", or(mh.SpecVersion, message.DefaultSpecVersion))
	if !mh.Timestamp.IsZero() {
		set("ce-time", message.FormatWireTime(mh.Timestamp))
	}
	if mh.Subject != "" {
		set("ce-subject", mh.Subject)
	}
	if mh.DataSchema != "" {
		set("ce-dataschema", mh.DataSchema)
	}
	hdr.Set(HeaderHandledCount, strconv.Itoa(mh.HandledCount))
	hdr.Set(HeaderTopic, headerValue(mh.Topic))
	hdr.Set(HeaderMessageType, mh.MessageType.String())
	if mh.CorrelationID != "" {
		hdr.Set(HeaderCorrelationID, headerValue(mh.CorrelationID))
	}
	if mh.PartitionKey != "" {
		hdr.Set(HeaderPartitionKey, headerValue(mh.PartitionKey))
	}
	for _, kv := range [...][2]string{{HeaderTraceParent, mh.TraceParent}, {HeaderTraceState, mh.TraceState}, {HeaderBaggage, mh.Baggage}} {
		if kv[1] == "" {
			continue
		}
		// W3C trace values are ASCII by definition; baggage keeps its own
		// percent-encoding, so these are passed through, never re-encoded.
		if !httpguts.ValidHeaderFieldValue(kv[1]) {
			h.log.LogAttrs(ctx, slog.LevelWarn, msgHTTPDroppedTrace,
				slog.String("message_id", mh.MessageID), slog.String("header", kv[0]))
			continue
		}
		hdr.Set(kv[0], kv[1])
	}
}

// statusResult maps a status code to a Result (no JSON override).
func statusResult(resp *http.Response, body []byte) pump.Result {
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return pump.Result{Outcome: pump.Ack}
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return pump.Result{Outcome: pump.Defer, Reason: statusReason(resp, body)}
	case code == http.StatusBadRequest || code == http.StatusUnsupportedMediaType || code == http.StatusUnprocessableEntity:
		return pump.Result{Outcome: pump.Unacceptable, Reason: statusReason(resp, body)}
	}
	return pump.Result{Outcome: pump.Defer, Err: fmt.Errorf("unexpected status %s", statusReason(resp, body))}
}

// statusReason is "HTTP <status>", followed by the last line of a short
// plain-text reply.
func statusReason(resp *http.Response, body []byte) string {
	r := "HTTP " + resp.Status
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/plain" {
		if line := lastLine(body, ""); line != "" {
			r += ": " + line
		}
	}
	return r
}

// replyResult reads a JSON Reply. It reports false when the reply is not
// JSON or has no "outcome", and an error for an outcome it does not know.
func (h *httpHandler) replyResult(ctx context.Context, m *message.Message, hdr http.Header, body []byte) (pump.Result, bool, error) {
	mt, _, err := mime.ParseMediaType(hdr.Get("Content-Type"))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return pump.Result{}, false, nil
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(body, &probe) != nil {
		return pump.Result{}, false, nil
	}
	if _, ok := probe["outcome"]; !ok {
		return pump.Result{}, false, nil
	}
	var r Reply
	if err := json.Unmarshal(body, &r); err != nil {
		return pump.Result{}, true, fmt.Errorf("reply: %w", err)
	}
	o, ok := pump.ParseOutcome(strings.ToLower(strings.TrimSpace(r.Outcome)))
	if !ok {
		return pump.Result{}, true, fmt.Errorf("reply outcome %q: want ack, defer, reject or unacceptable", r.Outcome)
	}
	res := pump.Result{Outcome: o, Reason: bound(r.Reason)}
	if o == pump.Defer && len(r.Delay) > 0 {
		if d, ok := parseDelay(r.Delay); ok {
			res.Delay = d
		} else {
			h.log.LogAttrs(ctx, slog.LevelWarn, msgHTTPBadDelay,
				slog.String("message_id", m.Header.MessageID), slog.String("delay", string(r.Delay)))
		}
	}
	if res.Reason == "" && (o == pump.Reject || o == pump.Unacceptable) {
		res.Reason = "http handler replied " + o.String()
	}
	return res, true, nil
}

// parseDelay reads a Reply delay: a Go duration string or a number of
// seconds, not negative.
func parseDelay(raw json.RawMessage) (time.Duration, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		return d, err == nil && d >= 0
	}
	var secs float64
	if json.Unmarshal(raw, &secs) == nil && secs >= 0 && secs < float64(1<<62)/float64(time.Second) {
		return time.Duration(secs * float64(time.Second)), true
	}
	return 0, false
}

// retryAfter reads a Retry-After value, delay-seconds or an HTTP date, as a
// delay from now; 0 when absent or not understood.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 || secs > int64(1<<62/time.Second) {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// headerValue percent-encodes the bytes a header value may not carry as
// they are: controls, non-ASCII, '"' and '%' (spaces are kept: a
// Content-Type has them).
func headerValue(s string) string { return percentEncode(s, needsEscape) }

// percentEncode writes every byte of s that esc selects as %XX.
func percentEncode(s string, esc func(byte) bool) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if esc(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if esc(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func needsEscape(c byte) bool { return c < 0x20 || c > 0x7e || c == '"' || c == '%' }

// CEHeaderValue percent-encodes s as the CloudEvents HTTP protocol
// binding requires of a string attribute sent as a ce-* header value: as
// UTF-8, every byte outside printable ASCII (U+0021..U+007E) and space,
// '"' and '%' become %XX (upper-case hex); every other byte is kept.
// Without the space, a value's leading and trailing spaces would be lost
// (HTTP drops the whitespace around a header value).
func CEHeaderValue(s string) string {
	return percentEncode(s, ceNeedsEscape)
}

func ceNeedsEscape(c byte) bool { return c <= 0x20 || c > 0x7e || c == '"' || c == '%' }

// DecodeCEHeaderValue decodes a ce-* header value as the CloudEvents HTTP
// protocol binding says: a value in double quotes is first unquoted as an
// RFC 7230 quoted-string (backslash escapes), then every %XX is decoded;
// a value encoded where it need not be is accepted. It returns an error
// for a % not followed by two hex digits, an unterminated quoted-string,
// and a result that is not valid UTF-8 (an overlong "%C0%A0" included).
func DecodeCEHeaderValue(v string) (string, error) {
	if len(v) >= 1 && v[0] == '"' {
		if len(v) < 2 || v[len(v)-1] != '"' {
			return "", fmt.Errorf("header value %s: unterminated quoted-string", redact.Quote(v))
		}
		var b strings.Builder
		in := v[1 : len(v)-1]
		for i := 0; i < len(in); i++ {
			c := in[i]
			if c == '\\' {
				if i+1 == len(in) {
					return "", fmt.Errorf("header value %s: quoted-string ends in a backslash", redact.Quote(v))
				}
				i++
				c = in[i]
			}
			b.WriteByte(c)
		}
		v = b.String()
	}
	if !strings.Contains(v, "%") {
		if !utf8.ValidString(v) {
			return "", fmt.Errorf("header value %s: not valid UTF-8", redact.Quote(v))
		}
		return v, nil
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '%' {
			out = append(out, c)
			continue
		}
		if i+2 >= len(v) || !isHex(v[i+1]) || !isHex(v[i+2]) {
			return "", fmt.Errorf("header value %s: %% at byte %d is not followed by two hex digits", redact.Quote(v), i)
		}
		out = append(out, unhex(v[i+1])<<4|unhex(v[i+2]))
		i += 2
	}
	if !utf8.Valid(out) {
		return "", fmt.Errorf("header value %s: decodes to bytes that are not valid UTF-8", redact.Quote(v))
	}
	return string(out), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// bound cuts a reason text to MaxReason bytes of valid UTF-8.
func bound(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= MaxReason {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return preview([]byte(s), MaxReason)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// redactedError is an error whose text went through the redaction rule; it
// still unwraps to the original for errors.Is and errors.As.
type redactedError struct {
	err  error
	text string
}

func (e redactedError) Error() string { return e.text }
func (e redactedError) Unwrap() error { return e.err }

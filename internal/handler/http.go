package handler

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/tlsfiles"
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

// TLSOptions configures the http handler's TLS client: its PEM files
// (tlsfiles.Files, which lint checks with too).
type TLSOptions = tlsfiles.Files

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
	if o != (TLSOptions{}) {
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

// tlsConfig builds a client TLS configuration from o. Its errors are
// tlsfiles.Files.ClientConfig's, prefixed "http handler: ".
func tlsConfig(o TLSOptions) (*tls.Config, error) {
	cfg, err := o.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("http handler: %w", err)
	}
	return cfg, nil
}

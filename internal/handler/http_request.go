package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
)

// The http handler's request and what its answer means: the POST of one
// message with its headers, the status and the JSON reply turned into a
// pump.Result, the reply's delay and Retry-After.

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

package handler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// TestHTTP_CloudEventsSDKReadsBackEveryAttribute: the CloudEvents Go SDK
// decodes the request the http handler sends as a binary-mode event whose
// every attribute, decoded as the HTTP protocol binding says, is the
// message's exactly, values with leading and trailing spaces, inner
// spaces, double quotes, '%' and non-ASCII text included. The SDK
// (v2.16) hands a ce-* header value over as it is, so each string
// attribute is percent-decoded by DecodeCEHeaderValue, as a receiver
// that follows the binding does.
func TestHTTP_CloudEventsSDKReadsBackEveryAttribute(t *testing.T) {
	m := &message.Message{Header: message.Header{
		MessageID:   "  id with spaces ✓ 100% \"q\"  ",
		Type:        " com.example.pedido-ñ ",
		Source:      "/sources/grüße and spaces ",
		SpecVersion: "1.0",
		Timestamp:   time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC),
		Subject:     "  sujet: Grüße \"quoted\" 100% \t tab ",
		DataSchema:  "https://schemas.example/ordér v2.json",
		ContentType: "application/json; charset=utf-8",
		MessageType: message.MTEvent,
		Topic:       "orders",
	}, Body: []byte(`{"order":42}`)}

	var mu sync.Mutex
	var readErr error
	var got map[string]string
	var body string
	// Its own server: the SDK reads the body (server() consumes it first).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		msg := cehttp.NewMessageFromHttpRequest(r)
		if msg.ReadEncoding() != binding.EncodingBinary {
			readErr = errNotBinary
			return
		}
		e, err := binding.ToEvent(r.Context(), msg)
		if err != nil {
			readErr = err
			return
		}
		got = map[string]string{
			"id": e.ID(), "type": e.Type(), "source": e.Source(), "specversion": e.SpecVersion(),
			"subject": e.Subject(), "dataschema": e.DataSchema(), "datacontenttype": e.DataContentType(),
		}
		for k, v := range got {
			if k == "datacontenttype" || k == "specversion" {
				continue // not ce-* string attributes (Content-Type is HTTP's own)
			}
			d, err := DecodeCEHeaderValue(v)
			if err != nil {
				readErr = err
				return
			}
			got[k] = d
		}
		got["time"] = e.Time().UTC().Format(time.RFC3339Nano)
		body = string(e.Data())
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	h := mustHTTP(t, HTTPOptions{URL: srv.URL})
	if r := h(context.Background(), m); r.Outcome != pump.Ack || r.Err != nil {
		t.Fatalf("handler: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if readErr != nil {
		t.Fatalf("the SDK could not read the request: %v", readErr)
	}
	want := map[string]string{
		"id": m.Header.MessageID, "type": m.Header.Type, "source": m.Header.Source, "specversion": "1.0",
		"subject": m.Header.Subject, "dataschema": m.Header.DataSchema, "datacontenttype": m.Header.ContentType,
		"time": "2025-03-04T05:06:07.89Z",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: the SDK read %q, want %q", k, got[k], w)
		}
	}
	if body != `{"order":42}` {
		t.Errorf("data: the SDK read %q", body)
	}
}

var errNotBinary = &sdkError{"the request is not a binary-mode CloudEvent"}

type sdkError struct{ s string }

func (e *sdkError) Error() string { return e.s }

// TestCEHeaderValue_EncodesAndDecodesAsTheBindingSays: encoding escapes
// space, '"', '%' and every byte outside printable ASCII, and keeps the
// rest; decoding reverses it, accepts values encoded where they need not
// be and quoted-strings, and refuses a bad escape or invalid UTF-8 (an
// overlong encoding of a space included).
func TestCEHeaderValue_EncodesAndDecodesAsTheBindingSays(t *testing.T) {
	for in, want := range map[string]string{
		" a b ":        "%20a%20b%20",
		`x"y%z`:        "x%22y%25z",
		"é\t\x7f~!":    "%C3%A9%09%7F~!",
		"plain/ascii:": "plain/ascii:",
	} {
		if got := CEHeaderValue(in); got != want {
			t.Errorf("CEHeaderValue(%q) = %q, want %q", in, got, want)
		}
		if back, err := DecodeCEHeaderValue(CEHeaderValue(in)); err != nil || back != in {
			t.Errorf("DecodeCEHeaderValue(CEHeaderValue(%q)) = %q, %v", in, back, err)
		}
	}
	for in, want := range map[string]string{
		"%61%62c":        "abc",
		`"a \"b\" %20c"`: `a "b"  c`,
		"%e2%9c%93":      "✓",
	} {
		if got, err := DecodeCEHeaderValue(in); err != nil || got != want {
			t.Errorf("DecodeCEHeaderValue(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"%C0%A0", "%zz", "abc%4", `"unterminated`, "%FF"} {
		if got, err := DecodeCEHeaderValue(bad); err == nil {
			t.Errorf("DecodeCEHeaderValue(%q) = %q, want an error", bad, got)
		}
	}
	if strings.Contains(CEHeaderValue("\x00"), "\x00") {
		t.Error("a NUL byte was sent as it is")
	}
}

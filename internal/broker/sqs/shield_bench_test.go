package sqs

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// discardClient reads a request's body and answers nothing: the inner
// client of BenchmarkBodyShield.
type discardClient struct{}

func (discardClient) Do(r *http.Request) (*http.Response, error) {
	_, err := io.Copy(io.Discard, r.Body)
	return nil, err
}

// BenchmarkBodyShield is bodyShield.Do over a client that only reads the
// body, for a DeleteMessageBatch-sized request (a 3,000-byte body, eight
// headers as the SDK sets them); "unshielded" is the same request handed
// to that client directly. One op = one request.
func BenchmarkBodyShield(b *testing.B) {
	body := []byte(strings.Repeat("x", 3000))
	headers := []string{"X-Amz-Target", "Content-Type", "Authorization", "X-Amz-Date", "Amz-Sdk-Invocation-Id", "Amz-Sdk-Request", "User-Agent", "X-Amz-Query-Mode"}
	for _, c := range []struct {
		name   string
		client interface {
			Do(*http.Request) (*http.Response, error)
		}
	}{{"shielded", bodyShield{inner: discardClient{}}}, {"unshielded", discardClient{}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", io.NopCloser(bytes.NewReader(body)))
				if err != nil {
					b.Fatal(err)
				}
				r.ContentLength = int64(len(body))
				for _, h := range headers {
					r.Header.Set(h, "a value of about forty characters, as sent")
				}
				if _, err := c.client.Do(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

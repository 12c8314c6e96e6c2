package consume_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/brightergo/brighter/internal/broker/gcp"
)

// googleTrap is a listener standing in for every real Google endpoint: the
// consumer under test is given it as HTTPS_PROXY (loopback addresses, the
// emulator's, are never proxied), so any request for a Google API or token
// endpoint reaches it first. It returns the proxy URL and what reached it.
func googleTrap(t *testing.T) (string, func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	listenMust(t, err)
	var mu sync.Mutex
	var got []string
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 512)
			n, _ := c.Read(buf) // "CONNECT host:443 HTTP/1.1" names where it was going
			mu.Lock()
			got = append(got, strings.SplitN(string(buf[:n]), "\r\n", 2)[0])
			mu.Unlock()
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return "http://" + ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestConsume_OnEmulatorNoRealGoogleCall: `brighter consume` of a Pub/Sub
// subscription with a native DeadLetterPolicy and no publisherMember or
// subscriberMember, on Google's emulator, with Application Default
// Credentials that resolve (an authorized_user file, as on a developer's
// machine): no request leaves for a real Google endpoint (every one would
// reach the HTTPS_PROXY trap; the project-number look-up of Cloud Resource
// Manager went there, token request first), the two IAM Warnings say the
// bindings were skipped on the emulator, and consume starts and stops
// cleanly.
func TestConsume_OnEmulatorNoRealGoogleCall(t *testing.T) {
	t.Parallel() // a project of its own on the shared emulator
	dir := t.TempDir()
	nativeDeadLetterConfig(t, "iam-trap", dir, "")
	proxy, reached := googleTrap(t)
	creds := filepath.Join(dir, "adc.json")
	listenMust(t, os.WriteFile(creds, []byte(`{"type":"authorized_user","client_id":"brighter-test.apps.googleusercontent.com","client_secret":"not-a-secret","refresh_token":"not-a-token"}`), 0o600))
	p := startConsume(t, dir, "brighter.yaml", "GOOGLE_APPLICATION_CREDENTIALS="+creds, "HTTPS_PROXY="+proxy, "https_proxy="+proxy, "NO_PROXY=", "no_proxy=")
	p.terminate(t)
	if got := reached(); len(got) != 0 {
		t.Errorf("requests left for real Google endpoints on the emulator: %q", got)
	}
	warnings := iamWarnings(p.stderr.String())
	if len(warnings) != 2 {
		t.Fatalf("%d IAM warnings, want 2 (one per binding); stderr:\n%s", len(warnings), p.stderr.String())
	}
	for _, w := range warnings {
		if !strings.Contains(w, `"status":"`+gcp.StatusSkippedOnEmulator+`"`) || !strings.Contains(w, `"note":"`+gcp.NoteIAMOnEmulator+`"`) {
			t.Errorf("the warning does not say the binding was skipped on the emulator:\n%s", w)
		}
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
)

// TestConsumeRestart_PubSub_Issue15 starts `brighter consume` twice on the
// same file against Google's Pub/Sub emulator, in both variants: the second
// start finds every topic and subscription already there (ack deadline,
// RetryPolicy, DeadLetterPolicy, labels) and must still start its pump
// (ready) and exit 0, with no error logged. Before issue 15 the restart
// exited 1: the update mask carried labels, which the emulator refuses.
func TestConsumeRestart_PubSub_Issue15(t *testing.T) {
	_, srv := gcptest.Start(t, "restart", nil, gcp.Connect)
	for _, variant := range []string{"reactor", "proactor"} {
		t.Run(variant, func(t *testing.T) {
			topic := "orders-" + variant
			file := filepath.Join(t.TempDir(), "brighter.yaml")
			yaml := fmt.Sprintf(`connections:
  gcp:
    projectId: %s
    emulatorHost: %s
subscriptions:
  - name: orders
    transport: gcp
    channelName: %s-sub
    routingKey: %s
    messagePumpType: %s
    requeueCount: 3
    requeueDelay: 2s
    deadLetterRoutingKey: %s-dlq
    handler: {type: builtin, name: ack}
    gcp:
      ackDeadline: 10s
      labels: {team: orders}
      subscriberMember: serviceAccount:test@example.iam.gserviceaccount.com
      deadLetterPolicy:
        topic: %s-native
        maxDeliveryAttempts: 5
        publisherMember: serviceAccount:test@example.iam.gserviceaccount.com
`, srv.Project, srv.Addr, topic, topic, variant, topic, topic)
			if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			for start := 1; start <= 2; start++ {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := l.Addr().String()
				_ = l.Close()
				stderr := &lockedBuffer{}
				streams := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: stderr, Getenv: os.LookupEnv}
				ctx, cancel := context.WithCancel(context.Background())
				code := make(chan int, 1)
				go func() { code <- run(ctx, streams, []string{"consume", "--config", file, "--listen", addr}) }()
				// Ready (/readyz 200) means start-up, with its create or
				// update of every channel, succeeded and the pump runs.
				deadline := time.Now().Add(60 * time.Second)
				for !listening(addr) {
					select {
					case c := <-code:
						cancel()
						t.Fatalf("start %d: consume exited with %d; stderr:\n%s", start, c, stderr.String())
					default:
					}
					if time.Now().After(deadline) {
						cancel()
						t.Fatalf("start %d: not ready within 60 s; stderr:\n%s", start, stderr.String())
					}
					time.Sleep(50 * time.Millisecond)
				}
				cancel()
				if c := <-code; c != exitOK {
					t.Fatalf("start %d: consume exited with %d; stderr:\n%s", start, c, stderr.String())
				}
				if s := stderr.String(); strings.Contains(s, "level=ERROR") || !strings.Contains(s, "message pump started") {
					t.Fatalf("start %d: consume logged an error or started no pump:\n%s", start, s)
				}
			}
		})
	}
}

// listening reports whether consume's /readyz on addr answers 200.
func listening(addr string) bool {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/handler"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
	"github.com/brightergo/brighter/internal/redact"
)

// lockedBuffer is a bytes.Buffer safe for the pump's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNew_SecretsAreMaskedBeforeTheRejectionIsStored: an exec handler
// built by New with the run's Redactor, whose program prints its
// environment and arguments to stderr, leaves no secret in what the pump
// stores or shows: the dead-letter and invalid-message copies (their
// rejectionMessage), the /events records and the pump's log lines, in
// both pump variants. The secrets are an env value of the handler block,
// the AWS key it inherits and a run secret passed as an argument; the log
// lines are written without the log handler's redaction, so the text
// must be masked before it reaches any of them.
func TestNew_SecretsAreMaskedBeforeTheRejectionIsStored(t *testing.T) {
	const envTok, awsKey, argTok = "exec-env-SECRET-8", "aws-key-SECRET-9", "arg-from-var-SECRET-10"
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsKey)
	prog := filepath.Join(t.TempDir(), "leak")
	body := "#!/bin/sh\necho \"env API_TOKEN=$API_TOKEN AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY args $*\" >&2\nexit \"$BRIGHTER_PARTITION_KEY\"\n"
	if err := os.WriteFile(prog, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			run := &redact.Redactor{}
			var logs lockedBuffer
			logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			h, err := handler.New(config.Handler{Type: config.HandlerExec, Command: prog, Args: []string{"--token", argTok},
				Env: map[string]string{"API_TOKEN": envTok}, Timeout: 10 * time.Second}, logger, handler.WithRedactor(run))
			if err != nil {
				t.Fatal(err)
			}
			// Learnt after the handler was built, as consume learns the
			// file's secrets after its logger exists.
			run.Add(argTok)
			b := memory.NewBroker(false)
			c := b.NewConsumer(memory.ConsumerOptions{Queue: "orders", DeadLetter: "orders-dlq", Invalid: "orders-invalid", Logger: logger})
			// 65 is unacceptable (the reason is stderr's last line); 1 is a
			// failure (its error is) that exhausts the budget of 1.
			for i, code := range []string{"65", "1"} {
				m := &message.Message{Header: message.Header{MessageID: "m" + code, MessageType: message.MTEvent, Topic: "orders",
					PartitionKey: code, Timestamp: time.Now().Add(time.Duration(i) * time.Millisecond)}, Body: []byte(`{}`)}
				if err := b.Publish(context.Background(), "orders", m); err != nil {
					t.Fatal(err)
				}
			}
			var events lockedBuffer
			record := pump.ObserverFunc(func(e pump.Event) {
				r := observe.FromEvent(e)
				j, err := json.Marshal(&r)
				if err != nil {
					t.Errorf("marshal record: %v", err)
				}
				_, _ = events.Write(append(j, '\n'))
			})
			opts := pumptest.Options(v, 1)
			opts.RequeueCount = 1
			pumptest.RunPump(t, c, h, opts, record, pump.LogObserver{Logger: logger})
			pumptest.WaitUntil(t, 20*time.Second, "both messages routed", func() bool {
				return b.Depth("orders-dlq")+b.Depth("orders-invalid") == 2
			})
			var stored bytes.Buffer
			if err := b.Dump(&stored); err != nil {
				t.Fatal(err)
			}
			for what, text := range map[string]string{"stored copies": stored.String(), "/events records": events.String(), "log lines": logs.String()} {
				if !strings.Contains(text, "API_TOKEN=") {
					t.Errorf("%s: nothing to check, the program's stderr is not there:\n%s", what, text)
				}
				for _, s := range []string{envTok, awsKey, argTok} {
					if strings.Contains(text, s) {
						t.Errorf("%s: secret %q stored in clear:\n%s", what, s, text)
					}
				}
			}
		})
	}
}

package handler

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
)

// TestHTTP_SecretsNeverInErrorsLogsOrReasons: the user-info, path, query
// values and header values of an http handler appear in none of its error
// texts, log lines or rejection reasons, whether the endpoint is
// unreachable, refuses the request, or echoes the request back.
func TestHTTP_SecretsNeverInErrorsLogsOrReasons(t *testing.T) {
	const token, pw, bearer = "tok-SECRET-1", "pw-SECRET-2", "hdr-SECRET-3"
	// A webhook endpoint carries its token in the path.
	const pathToken = "pathTOKEN-SECRET-4"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close() // nothing listens: connection refused
	echo, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("bad request to " + r.URL.String() + " with " + r.Header.Get("Authorization")))
	})
	// A 500 with a plain-text body is a Defer whose error carries the body.
	echo500, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("failed " + r.URL.String() + " with " + r.Header.Get("Authorization")))
	})
	refuse, _ := server(t, status(http.StatusInternalServerError))
	for name, host := range map[string]string{
		"unreachable": dead, "echoing": strings.TrimPrefix(echo.URL, "http://"),
		"echoing 500": strings.TrimPrefix(echo500.URL, "http://"), "refusing": strings.TrimPrefix(refuse.URL, "http://"),
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			h, err := HTTP(HTTPOptions{
				URL:     "http://user:" + pw + "@" + host + "/services/T000/" + pathToken + "?token=" + token,
				Headers: map[string]string{"Authorization": "Bearer " + bearer},
				Logger:  slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			if err != nil {
				t.Fatal(err)
			}
			res := h(context.Background(), &message.Message{Header: message.Header{MessageID: "m1", MessageType: message.MTEvent}})
			if res.Outcome == pump.Ack {
				t.Fatalf("outcome %v, want a failure", res.Outcome)
			}
			out := logs.String() + res.Reason
			if res.Err != nil {
				out += res.Err.Error()
			}
			if out == "" {
				t.Fatal("nothing to check: no error, reason or log")
			}
			for _, s := range []string{token, pw, bearer, pathToken, "T000"} {
				if strings.Contains(out, s) {
					t.Errorf("secret %q leaked: %s", s, out)
				}
			}
			if !strings.Contains(logs.String(), "http://REDACTED@"+host+"/REDACTED?token=REDACTED") {
				t.Errorf("the log does not name the endpoint by scheme, host and port: %s", logs.String())
			}
		})
	}
}

// TestExec_SecretsNeverInReasonsErrorsOrLogs: an exec handler whose
// program prints its environment and arguments to stderr shows none of
// the secrets among them in its reason, error or log lines: its env
// values, the AWS keys it inherits, and the run's secrets (an argument
// from ${VAR}), whether it exits 65 (the reason), 75 or 1 (the error).
func TestExec_SecretsNeverInReasonsErrorsOrLogs(t *testing.T) {
	const envTok, awsKey, argTok = "exec-env-SECRET-5", "aws-key-SECRET-6", "arg-from-var-SECRET-7"
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsKey)
	run := &redact.Redactor{}
	run.Add(argTok)
	prog := script(t, t.TempDir(), "leak", `echo "env API_TOKEN=$API_TOKEN AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY args $*" >&2; exit "$BRIGHTER_PARTITION_KEY"`)
	for _, code := range []string{"65", "75", "1"} {
		t.Run("exit "+code, func(t *testing.T) {
			var logs bytes.Buffer
			h, err := Exec(ExecOptions{
				Command: prog, Args: []string{"--token", argTok}, Env: []string{"API_TOKEN=" + envTok},
				Logger:   slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Redactor: run,
			})
			if err != nil {
				t.Fatal(err)
			}
			res := h(context.Background(), &message.Message{Header: message.Header{MessageID: "m1", MessageType: message.MTEvent, PartitionKey: code}})
			out := res.Reason
			if res.Err != nil {
				out += res.Err.Error()
			}
			if !strings.Contains(out, "API_TOKEN=") {
				t.Fatalf("nothing to check: the program's stderr is not in the reason or error: %q", out)
			}
			out += logs.String()
			for _, s := range []string{envTok, awsKey, argTok} {
				if strings.Contains(out, s) {
					t.Errorf("secret %q leaked: %s", s, out)
				}
			}
		})
	}
}

// TestHTTP_BadURLErrorsShowNoPathToken: the errors HTTP returns for a URL
// it refuses name it by scheme and host, never with its path.
func TestHTTP_BadURLErrorsShowNoPathToken(t *testing.T) {
	for _, raw := range []string{"ftp://hooks.example/services/T000/tok-PATH-SECRET", "http://hooks.example:bad/services/tok-PATH-SECRET"} {
		_, err := HTTP(HTTPOptions{URL: raw})
		if err == nil {
			t.Fatalf("HTTP(%q) accepted it", raw)
		}
		if strings.Contains(err.Error(), "tok-PATH-SECRET") || !strings.Contains(err.Error(), "hooks.example") {
			t.Errorf("HTTP(%q) = %v", raw, err)
		}
	}
}

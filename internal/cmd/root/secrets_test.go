package root

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// The secrets of the corpus: each is configured in one place a secret can
// be, always through ${VAR}, and must appear in no byte brighter writes.
var corpusSecrets = map[string]string{
	"SECRET_USER": "usr-S3CRET-name-29",
	// The password holds the user name: masking the user name first must
	// not leave the password's tail.
	"SECRET_PW": "usr-S3CRET-name-29-pw-S3CRET-userinfo-29",
	// A webhook's token in the URL's path.
	"SECRET_PATH":  "path-S3CRET-token-29",
	"SECRET_TOKEN": "tok-S3CRET-query-29",
	"SECRET_HDR":   "hdr-S3CRET-header-29",
	"SECRET_AK":    "ak-S3CRET-rocketmq-29",
	"SECRET_SK":    "sk-S3CRET-rocketmq-29",
	// AWS keys come from the environment only.
	"AWS_SECRET_ACCESS_KEY": "aws-S3CRET-secretkey-29",
	"AWS_SESSION_TOKEN":     "aws-S3CRET-session-29",
}

// corpusEnv is the environment of a corpus run: the secrets, and the
// variables of the config-error file's fields.
func corpusEnv(extra ...string) []string {
	env := cmdtest.Env()
	for k, v := range corpusSecrets {
		env = append(env, k+"="+v)
	}
	for i, kind := range []string{"INT", "ENUM", "DUR", "BOOL", "NAME", "URL"} {
		env = append(env, fmt.Sprintf("SECRET_%s=field-S3CRET-%s-%d", kind, strings.ToLower(kind), i))
	}
	return append(env, extra...)
}

// leaked returns the names of the corpus secrets (and field secrets) that
// b holds.
func leaked(b string) []string {
	var out []string
	for k, v := range corpusSecrets {
		if strings.Contains(b, v) {
			out = append(out, k)
		}
	}
	if strings.Contains(b, "field-S3CRET-") {
		out = append(out, "a ${VAR} field value")
	}
	// Parts of a secret a transformation might leave (percent-encoding
	// keeps these letters).
	if strings.Contains(b, "S3CRET") {
		out = append(out, "S3CRET")
	}
	return out
}

// corpusYAML is a subscriptions file whose http handler carries the
// secrets in its URL's user-info (a password holding the user name), path
// and query and in a header, with RocketMQ
// keys in connections, all through ${VAR}; messages are dead-lettered on
// the first deferral.
func corpusYAML(addr string) string {
	return `connections:
  rocketmq:
    endpoint: 127.0.0.1:1
    accessKey: ${SECRET_AK}
    secretKey: ${SECRET_SK}
subscriptions:
  - name: orders
    transport: memory
    requeueCount: 1
    deadLetterRoutingKey: orders-dlq
    invalidMessageRoutingKey: orders-invalid
    emptyChannelDelay: 10ms
    handler:
      type: http
      url: "http://${SECRET_USER}:${SECRET_PW}@` + addr + `/services/T000/${SECRET_PATH}?token=${SECRET_TOKEN}"
      headers: {Authorization: "Bearer ${SECRET_HDR}"}
      timeout: 2s
    memory: {seed: in.jsonl, output: out.jsonl}
`
}

// badFieldsYAML sets a ${VAR} in every field kind to a value that fails
// validation: integer, enum, duration, boolean, name and URL.
const badFieldsYAML = `subscriptions:
  - name: orders
    transport: sqs
    channelName: "${SECRET_NAME}/x y"
    bufferSize: "${SECRET_INT}"
    messagePumpType: "${SECRET_ENUM}"
    requeueDelay: "${SECRET_DUR}"
    sqs: {rawMessageDelivery: "${SECRET_BOOL}"}
    handler:
      type: http
      url: "ftp://${SECRET_URL}/x"
`

// TestSecretsCorpus_NothingLeaks configures a secret in every place
// one can be (http URL user-info and query, a handler header, ${VAR} in
// every field kind, AWS keys, RocketMQ access and secret keys) and runs
// consume against an unreachable and a refusing endpoint (the refusing one
// echoes the request URL and headers back, as a proxy's error page does),
// text and JSON logs, with the /events stream read; dlq peek -o json of the
// copies rejected through that handler (and the stored copies themselves);
// lint -o text, json, sarif and github; and consume and lint on a file whose
// fields fail validation: the secrets appear in none of the bytes.
func TestSecretsCorpus_NothingLeaks(t *testing.T) {
	// In parallel, as are its cases: `brighter` processes in directories of
	// their own that mostly wait (on an unreachable or refusing endpoint's
	// timeouts and back-offs); 95 s one after another.
	t.Parallel()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "refused %s %s with %s", r.Method, r.URL.String(), r.Header.Get("Authorization"))
	}))
	t.Cleanup(echo.Close)
	// Nothing listens on port 1 (privileged; the tests never bind it): a
	// port freed by a closed listener could be taken again by a parallel
	// test's listener.
	const unreachable = "127.0.0.1:1"

	for _, ep := range []struct{ name, addr string }{{"unreachable", unreachable}, {"refusing", strings.TrimPrefix(echo.URL, "http://")}} {
		for _, format := range []string{"text", "json"} {
			t.Run(ep.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				write(t, dir, "brighter.yaml", corpusYAML(ep.addr))
				write(t, dir, "in.jsonl", `{"id":"m1","topic":"orders","messageType":"MT_EVENT","body":"{}"}`+"\n"+
					`{"id":"m2","topic":"orders","messageType":"MT_EVENT","body":"{}"}`+"\n")
				var all strings.Builder
				all.WriteString(consumeWithEvents(t, dir, format))
				out, _ := os.ReadFile(filepath.Join(dir, "out.jsonl"))
				if !strings.Contains(string(out), `"topic":"orders-dlq"`) || !strings.Contains(string(out), "rejectionMessage") {
					t.Fatalf("no dead-letter copy with a rejection message in out.jsonl:\n%s\nconsume wrote:\n%s", out, all.String())
				}
				all.Write(out)
				for _, args := range [][]string{
					{"dlq", "peek", "orders", "--config", "brighter.yaml", "-o", "json"},
					{"dlq", "peek", "orders", "--config", "brighter.yaml"},
					{"dlq", "stats", "orders", "--config", "brighter.yaml", "-o", "json"},
					{"lint", "--config", "brighter.yaml", "-o", "text"},
					{"lint", "--config", "brighter.yaml", "-o", "json"},
					{"lint", "--config", "brighter.yaml", "-o", "sarif"},
					{"lint", "--config", "brighter.yaml", "-o", "github"},
				} {
					all.WriteString(corpusRun(t, dir, "--log-format", format, args))
				}
				if got := leaked(all.String()); len(got) > 0 {
					t.Errorf("secrets leaked: %v\n%s", got, all.String())
				}
			})
		}
	}
	t.Run("brokers", func(t *testing.T) {
		t.Parallel()
		// RocketMQ refusing the credentials (UNAUTHORIZED), SQS refusing the
		// security token, and both unreachable; the keys are the RocketMQ
		// AK/SK of the file and the AWS keys of the environment.
		rocketmq.ConfigureClientLog(t.TempDir())
		rmq, err := rmqtest.Start(rmqtest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rmq.Close)
		rmq.FailQueryRoute(func(string, string) error {
			return &rmqtest.StatusError{Code: v2.Code_UNAUTHORIZED, Message: "signature does not match"}
		})
		aws := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.Header().Set("x-amzn-query-error", "InvalidClientTokenId;Sender")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"__type":"com.amazon.coral.service#UnrecognizedClientException","message":"The security token included in the request is invalid: %s"}`, r.Header.Get("Authorization"))
		}))
		t.Cleanup(aws.Close)
		for _, ep := range []struct{ name, sqs, rmq string }{
			{"unreachable", "http://" + unreachable, unreachable},
			{"refusing", aws.URL, rmq.Endpoint()},
		} {
			t.Run(ep.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				write(t, dir, "brighter.yaml", `connections:
  aws: {region: us-east-1, endpoint: "`+ep.sqs+`"}
  rocketmq: {endpoint: "`+ep.rmq+`", accessKey: "${SECRET_AK}", secretKey: "${SECRET_SK}"}
subscriptions:
  - name: queue
    transport: sqs
    channelName: orders
    deadLetterRoutingKey: orders-dlq
    makeChannels: validate
    handler: {type: builtin, name: ack}
  - name: topic
    transport: rocketmq
    channelName: orders
    deadLetterRoutingKey: orders-dlq
    makeChannels: assume
    rocketmq: {consumerGroup: g}
    handler: {type: builtin, name: ack}
`)
				var all strings.Builder
				for _, args := range [][]string{
					{"consume", "--config", "brighter.yaml", "-s", "queue"},
					{"consume", "--config", "brighter.yaml", "-s", "topic"},
					{"dlq", "peek", "queue", "--config", "brighter.yaml", "--wait", "1s"},
					{"dlq", "peek", "topic", "--config", "brighter.yaml", "--wait", "1s"},
					{"lint", "--config", "brighter.yaml", "-o", "sarif"},
				} {
					all.WriteString(corpusRunFor(t, 15*time.Second, dir, "--log-format", "json", args))
				}
				if got := leaked(all.String()); len(got) > 0 {
					t.Errorf("secrets leaked: %v\n%s", got, all.String())
				}
			})
		}
	})
	t.Run("fields", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, dir, "brighter.yaml", badFieldsYAML)
		var all strings.Builder
		for _, args := range [][]string{
			{"consume", "--config", "brighter.yaml"},
			{"lint", "--config", "brighter.yaml", "-o", "text"},
			{"lint", "--config", "brighter.yaml", "-o", "json"},
			{"lint", "--config", "brighter.yaml", "-o", "sarif"},
			{"lint", "--config", "brighter.yaml", "-o", "github"},
			{"dlq", "peek", "orders", "--config", "brighter.yaml"},
		} {
			for _, format := range []string{"text", "json"} {
				all.WriteString(corpusRun(t, dir, "--log-format", format, args))
			}
		}
		for _, field := range []string{"${SECRET_INT}", "${SECRET_ENUM}", "${SECRET_DUR}", "${SECRET_BOOL}", "${SECRET_NAME}/x y", "ftp://${SECRET_URL}/x"} {
			if !strings.Contains(all.String(), field) {
				t.Errorf("no error quotes %q as written", field)
			}
		}
		if got := leaked(all.String()); len(got) > 0 {
			t.Errorf("secrets leaked: %v\n%s", got, all.String())
		}
	})
}

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// corpusRun runs brighter with the corpus environment and returns its
// stdout and stderr.
func corpusRun(t *testing.T, dir, flag, format string, args []string) string {
	t.Helper()
	return corpusRunFor(t, time.Minute, dir, flag, format, args)
}

// corpusRunFor is corpusRun that kills the command after d (a consume
// against a broker that never answers keeps retrying).
func corpusRunFor(t *testing.T, d time.Duration, dir, flag, format string, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, "brighter", append(args, flag, format)...)
	cmd.Dir, cmd.Env = dir, corpusEnv()
	var b cmdtest.LockedBuffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if done, err := cmdtest.StartChild(cmd); err == nil {
		<-done // lint and the config errors exit non-zero; the bytes are what matter
	}
	if b.String() == "" && args[len(args)-1] != "github" {
		// (-o github writes only findings; a clean file has none)
		t.Errorf("brighter %v wrote nothing", args)
	}
	return b.String()
}

// consumeWithEvents runs consume with --listen until both messages are
// rejected, reading the /events stream all along, then stops it with
// SIGINT; it returns stderr and the stream.
func consumeWithEvents(t *testing.T, dir, format string) string {
	t.Helper()
	cmd := exec.Command("brighter", "consume", "--config", "brighter.yaml", "--log-format", format, "--listen", cmdtest.AnyListen)
	cmd.Dir, cmd.Env = dir, corpusEnv()
	var stderr, events cmdtest.LockedBuffer
	cmd.Stderr = &stderr
	done, err := cmdtest.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		<-done
	}
	deadline := time.Now().Add(time.Minute)
	var resp *http.Response
	for {
		// The port the listener got, from its start line (no port race).
		addr := cmdtest.ListenedAddr(stderr.String())
		err := fmt.Errorf("no listener start line yet")
		var r *http.Response
		if addr != "" {
			r, err = http.Get("http://" + addr + "/events")
		}
		if err == nil {
			resp = r
			break
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("no /events: %v; stderr:\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			events.Write(append(sc.Bytes(), '\n'))
		}
	}()
	for strings.Count(events.String(), `"kind":"rejected"`) < 2 {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("both messages not rejected within a minute; events:\n%s\nstderr:\n%s", events.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Hang up the stream first: consume's listener waits for its clients
	// at stop.
	_ = resp.Body.Close()
	<-streamDone
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("consume did not stop on SIGINT; stderr:\n%s", stderr.String())
	}
	return stderr.String() + events.String()
}

package root

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/telemetry"
)

// jsonLines checks that every line of stderr is one JSON object and returns
// the records.
func jsonLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("stderr line is not JSON (%v): %s", err, line)
			continue
		}
		out = append(out, rec)
	}
	return out
}

// TestLogFormatJSON_EveryStderrLineIsJSON: with --log-format json
// every line brighter writes on stderr is a JSON record: in a run whose
// OpenTelemetry collector refuses every export (the SDK's own error
// handler and logger go through slog), and in runs that fail at start-up
// (the final error is one record: level ERROR, the error, the exit code).
func TestLogFormatJSON_EveryStderrLineIsJSON(t *testing.T) {
	t.Run("failing collector", func(t *testing.T) {
		dir := t.TempDir()
		yaml := "subscriptions:\n  - name: orders\n    transport: memory\n    emptyChannelDelay: 10ms\n    handler: {type: builtin, name: ack}\n    memory: {seed: seed.jsonl}\n"
		seed := `{"id":"m1","topic":"orders","messageType":"MT_EVENT","body":"{}"}` + "\n"
		for name, data := range map[string]string{"brighter.yaml": yaml, "seed.jsonl": seed} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("brighter", "consume", "--config", "brighter.yaml", "--log-format", "json")
		cmd.Dir = dir
		// Port 1 on loopback: nothing listens, every export is refused.
		cmd.Env = append(cmdtest.Env(),
			"OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=otlp",
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
			"OTEL_EXPORTER_OTLP_TIMEOUT=300", "OTEL_BSP_SCHEDULE_DELAY=20", "OTEL_METRIC_EXPORT_INTERVAL=50",
			"OTEL_LOG_LEVEL=debug")
		var stderr cmdtest.LockedBuffer
		cmd.Stderr = &stderr
		done, err := cmdtest.StartChild(cmd)
		if err != nil {
			t.Fatal(err)
		}
		// The SDK's error handler reports the refused exports while the
		// consumer runs; then a graceful stop flushes (and fails) again.
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(stderr.String(), `"msg":"`+telemetry.LogOTelError+`"`) {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("no %q record within 30s; stderr:\n%s", telemetry.LogOTelError, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("consume did not stop on SIGINT; stderr:\n%s", stderr.String())
		}
		recs := jsonLines(t, stderr.String())
		found := false
		for _, r := range recs {
			if r["msg"] == telemetry.LogOTelError && r["level"] == "ERROR" && strings.Contains(r["error"].(string), "127.0.0.1:1") {
				found = true
			}
		}
		if !found {
			t.Errorf("no ERROR record of the refused collector; stderr:\n%s", stderr.String())
		}
	})
	for name, args := range map[string][]string{
		"missing file":    {"consume", "--config", "absent.yaml", "--log-format", "json"},
		"unknown command": {"consum", "--log-format", "json"},
		"bad flag value":  {"dlq", "peek", "sqs://q", "--limit", "x", "--log-format", "json"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := cmdtest.BrighterExit(t, t.TempDir(), args...)
			if code == cmdutil.ExitOK {
				t.Fatalf("exit 0, want a failure")
			}
			recs := jsonLines(t, stderr)
			if len(recs) == 0 {
				t.Fatalf("no record on stderr")
			}
			last := recs[len(recs)-1]
			if last["level"] != "ERROR" || last["msg"] != cmdutil.MsgRunFailed || last["error"] == "" || last["exit_code"] != float64(code) {
				t.Errorf("final record %v, want level ERROR, msg %q, the error and exit_code %d", last, cmdutil.MsgRunFailed, code)
			}
		})
	}
}

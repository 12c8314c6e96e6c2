package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/pump"
)

// script writes an executable /bin/sh script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustExec(t *testing.T, opts ExecOptions) pump.Handler {
	t.Helper()
	h, err := Exec(opts)
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	return h
}

func TestExec_ExitCodeSelectsOutcome(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		code    int
		outcome pump.Outcome
		reason  string
		err     bool
	}{
		{0, pump.Ack, "", false},
		{75, pump.Defer, "try later", false},
		{65, pump.Unacceptable, "field order.total is missing", false},
		{1, pump.Defer, "", true},
		{2, pump.Defer, "", true},
	}
	for _, c := range cases {
		t.Run(strconv.Itoa(c.code), func(t *testing.T) {
			logger, lb := newTestLogger()
			cmd := script(t, dir, "exit"+strconv.Itoa(c.code), `echo "out line"
echo "first line" >&2
echo "`+c.reason+`" >&2
echo >&2
exit `+strconv.Itoa(c.code))
			h := mustExec(t, ExecOptions{Command: cmd, Logger: logger})
			r := h(context.Background(), testMessage(0))
			if r.Outcome != c.outcome || (r.Err != nil) != c.err {
				t.Fatalf("exit %d: %+v, want outcome %v, err %v", c.code, r, c.outcome, c.err)
			}
			if c.reason != "" && r.Reason != c.reason {
				t.Fatalf("exit %d: reason %q, want the last stderr line %q", c.code, r.Reason, c.reason)
			}
			switch c.code {
			case 0:
				rec := lb.find(t, msgExecOK)
				if rec["level"] != "DEBUG" || rec["stdout"] != "out line\n" || rec["message_id"] != testMessage(0).Header.MessageID {
					t.Fatalf("success log = %v", rec)
				}
			case 75, 65:
				msg := map[int]string{75: msgExecDeferred, 65: msgExecUnacceptable}[c.code]
				rec := lb.find(t, msg)
				if rec["level"] != "WARN" || !strings.Contains(rec["stderr"].(string), "first line") {
					t.Fatalf("log = %v", rec)
				}
			default:
				rec := lb.find(t, msgExecFailed)
				if rec["level"] != "ERROR" || !strings.Contains(rec["stderr"].(string), "first line") ||
					rec["exit_code"] != float64(c.code) || rec["message_id"] == nil {
					t.Fatalf("failure log = %v", rec)
				}
				if !strings.Contains(r.Err.Error(), "exit status "+strconv.Itoa(c.code)) {
					t.Fatalf("err = %v", r.Err)
				}
			}
		})
	}
}

// The handler's reason for an unacceptable message becomes the
// rejectionMessage; with no stderr it still says why.
func TestExec_UnacceptableWithoutStderrHasReason_R18(t *testing.T) {
	h := mustExec(t, ExecOptions{Command: script(t, t.TempDir(), "s", "exit 65")})
	r := h(context.Background(), testMessage(0))
	if r.Outcome != pump.Unacceptable || !strings.Contains(r.Reason, "65") {
		t.Fatalf("%+v", r)
	}
}

func TestExec_ReasonIsBounded(t *testing.T) {
	h := mustExec(t, ExecOptions{Command: script(t, t.TempDir(), "s", `head -c 5000 /dev/zero | tr '\0' 'a' >&2; exit 65`)})
	r := h(context.Background(), testMessage(0))
	if r.Outcome != pump.Unacceptable || len(r.Reason) > MaxReason || !strings.HasPrefix(r.Reason, "aaaa") {
		t.Fatalf("reason of %d bytes: %.40q", len(r.Reason), r.Reason)
	}
}

// The environment carries the header, including the presented delivery
// count and W3C trace context; the body arrives on stdin.
func TestExec_EnvironmentAndStdin_R1(t *testing.T) {
	dir := t.TempDir()
	envFile, bodyFile := filepath.Join(dir, "env"), filepath.Join(dir, "body")
	cmd := script(t, dir, "s", `env > "$ENV_FILE"; cat > "$BODY_FILE"`)
	h := mustExec(t, ExecOptions{Command: cmd, Env: []string{"ENV_FILE=" + envFile, "BODY_FILE=" + bodyFile, "EXTRA=yes"}})
	m := testMessage(4)
	if r := h(context.Background(), m); r.Outcome != pump.Ack || r.Err != nil {
		t.Fatalf("%+v", r)
	}
	env := readEnv(t, envFile)
	want := map[string]string{
		EnvMessageID:     m.Header.MessageID,
		EnvTopic:         "orders",
		EnvMessageType:   "MT_COMMAND",
		EnvHandledCount:  "4",
		EnvCorrelationID: "corr-1",
		EnvContentType:   m.Header.ContentType,
		EnvPartitionKey:  "customer-7",
		EnvTimestamp:     "2025-03-04T05:06:07.890Z",
		EnvReplyTo:       "replies",
		EnvTraceParent:   m.Header.TraceParent,
		EnvTraceState:    m.Header.TraceState,
		EnvBaggage:       m.Header.Baggage,
		"EXTRA":          "yes",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	var bag map[string]any
	if err := json.Unmarshal([]byte(env[EnvBag]), &bag); err != nil || bag["tenant"] != "acme" {
		t.Errorf("%s = %q (%v)", EnvBag, env[EnvBag], err)
	}
	if _, ok := env["PATH"]; !ok {
		t.Error("the inherited environment (PATH) is missing")
	}
	body, err := os.ReadFile(bodyFile)
	if err != nil || string(body) != `{"order":42}` {
		t.Fatalf("stdin = %q (%v)", body, err)
	}
}

// A bag too long for the environment (Linux refuses any one string over
// 128 KiB: "argument list too long", as three 100 KB headers
// do) reaches the handler in a file named by BRIGHTER_BAG_FILE,
// removed after the run; the command starts and acknowledges.
func TestExec_LargeBagGoesThroughAFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	cmd := script(t, dir, "s", `{ printf '%s|' "$BRIGHTER_BAG"; printf '%s|' "$BRIGHTER_BAG_FILE"; cat "$BRIGHTER_BAG_FILE"; } > "$OUT"`)
	h := mustExec(t, ExecOptions{Command: cmd, Env: []string{"OUT=" + out}})
	m := testMessage(0)
	big := strings.Repeat("x", 100_000)
	for i := range 3 {
		m.Header.Bag[fmt.Sprintf("big-%d", i)] = big
	}
	if r := h(context.Background(), m); r.Outcome != pump.Ack || r.Err != nil {
		t.Fatalf("%+v, want Ack", r)
	}
	seen, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(string(seen), "|", 3)
	if len(parts) != 3 || parts[0] != "" || parts[1] == "" {
		t.Fatalf("BRIGHTER_BAG %q, BRIGHTER_BAG_FILE %q: want the first empty and the second set", parts[0], parts[1])
	}
	var bag map[string]any
	if err := json.Unmarshal([]byte(parts[2]), &bag); err != nil || bag["big-2"] != big || bag["tenant"] != "acme" {
		t.Fatalf("the file does not hold the bag (%v)", err)
	}
	if _, err := os.Stat(parts[1]); !os.IsNotExist(err) {
		t.Errorf("%s still exists after the run (%v)", parts[1], err)
	}
}

// Inherited trace variables never describe a message that has none, and a
// NUL byte in a header cannot stop the command from starting.
func TestExec_EnvironmentDescribesOnlyTheMessage(t *testing.T) {
	t.Setenv(EnvTraceParent, "00-inherited")
	t.Setenv(EnvHandledCount, "99")
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	h := mustExec(t, ExecOptions{Command: script(t, dir, "s", `env > "$ENV_FILE"`), Env: []string{"ENV_FILE=" + envFile}})
	m := testMessage(0)
	m.Header.TraceParent, m.Header.TraceState, m.Header.Baggage = "", "", ""
	m.Header.CorrelationID = "a\x00b"
	if r := h(context.Background(), m); r.Outcome != pump.Ack {
		t.Fatalf("%+v", r)
	}
	env := readEnv(t, envFile)
	if v, ok := env[EnvTraceParent]; ok {
		t.Errorf("TRACEPARENT = %q leaked from the parent environment", v)
	}
	if env[EnvHandledCount] != "0" || env[EnvCorrelationID] != "ab" {
		t.Errorf("count %q correlation %q", env[EnvHandledCount], env[EnvCorrelationID])
	}
}

func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

// Arguments reach the command as given: nothing interprets them.
func TestExec_ArgsAreNeverShellInterpreted(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "x")
	out := filepath.Join(dir, "args")
	cmd := script(t, dir, "s", `for a in "$@"; do printf '%s\n' "$a"; done > "$OUT"`)
	args := []string{"$(touch " + marker + ")", "`touch " + marker + "`", "a; touch " + marker, "$HOME"}
	h := mustExec(t, ExecOptions{Command: cmd, Args: args, Env: []string{"OUT=" + out}})
	if r := h(context.Background(), testMessage(0)); r.Outcome != pump.Ack {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an argument was run by a shell: %s exists (%v)", marker, err)
	}
	got, _ := os.ReadFile(out)
	if string(got) != strings.Join(args, "\n")+"\n" {
		t.Fatalf("args = %q, want %q", got, args)
	}
}

// A timeout kills the command and its children (the process group) and
// defers with an error.
func TestExec_TimeoutKillsProcessGroupAndDefers(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := script(t, dir, "s", `sleep 300 & echo $! > "$PID_FILE"; wait`)
	h := mustExec(t, ExecOptions{Command: cmd, Env: []string{"PID_FILE=" + pidFile}, Timeout: 300 * time.Millisecond, WaitDelay: 5 * time.Second})
	start := time.Now()
	r := h(context.Background(), testMessage(0))
	if r.Outcome != pump.Defer || r.Err == nil || !strings.Contains(r.Err.Error(), "timed out") {
		t.Fatalf("%+v", r)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("handler returned after %s; the kill did not end the group", el)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

// waitGone polls until pid no longer exists (a zombie waiting for its
// reaper counts as gone: it has stopped running), failing after a deadline.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d still runs after the timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A run cut off by the stop (its context cancelled) defers, and is logged
// at Info, not as an exec failure at Error: a planned stop is not an alert.
func TestExec_CancelledContextDefers(t *testing.T) {
	dir := t.TempDir()
	logger, lb := newTestLogger()
	h := mustExec(t, ExecOptions{Command: script(t, dir, "s", `sleep 300`), Timeout: time.Minute, Logger: logger})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan pump.Result, 1)
	go func() { done <- h(ctx, testMessage(0)) }()
	cancel()
	select {
	case r := <-done:
		if r.Outcome != pump.Defer || r.Err == nil || !strings.Contains(r.Err.Error(), "cancelled") {
			t.Fatalf("%+v", r)
		}
		lb.cutOffAtInfo(t, msgExecCutOff)
	case <-time.After(10 * time.Second):
		t.Fatal("handler did not return after its context was cancelled")
	}
}

// TestExec_FailureToStartDefers: a command whose interpreter is gone
// after the start-up check (an image changed under a running consumer)
// fails to start at run time, and the message is deferred.
func TestExec_FailureToStartDefers(t *testing.T) {
	dir := t.TempDir()
	interp := filepath.Join(dir, "interp")
	if err := os.WriteFile(interp, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "s")
	if err := os.WriteFile(p, []byte("#!"+interp+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := mustExec(t, ExecOptions{Command: p})
	if err := os.Remove(interp); err != nil {
		t.Fatal(err)
	}
	r := h(context.Background(), testMessage(0))
	if r.Outcome != pump.Defer || r.Err == nil || !strings.Contains(r.Err.Error(), "could not start") {
		t.Fatalf("%+v", r)
	}
}

// TestExec_RefusesACommandThatCannotStart: Exec, which consume runs when it
// starts the subscription, refuses a command the kernel cannot start,
// reading a script's #! line: an interpreter that is missing or not
// executable, an env-style name on no directory of the PATH the command
// runs with (opts.Env's PATH when it sets one), a text file with no #!
// line; it builds one whose interpreter is there.
func TestExec_RefusesACommandThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("plain", "#!/bin/sh\n", 0o644)
	for _, tc := range []struct {
		name, content string
		env           []string
		want          string // "" when Exec builds it
	}{
		{name: "a missing interpreter", content: "#!/usr/bin/python9\nprint(1)\n",
			want: `cannot be run: its #! line names interpreter "/usr/bin/python9": no such file or directory`},
		{name: "an interpreter that is not executable", content: "#!" + plain + "\n",
			want: `its #! line names interpreter "` + plain + `": permission denied`},
		{name: "an env-style name not on PATH", content: "#!/usr/bin/env python9\n",
			want: `its #! line runs "python9" through /usr/bin/env: no executable file of that name on PATH`},
		{name: "an env-style name not on the command's own PATH", content: "#!/usr/bin/env sh\n", env: []string{"PATH=" + dir},
			want: `its #! line runs "sh" through /usr/bin/env`},
		{name: "a text file with no #! line", content: "exit 0\n", want: "no #! line"},
		{name: "an env-style name on PATH", content: "#!/usr/bin/env sh\nexit 0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write("s", tc.content, 0o755)
			_, err := Exec(ExecOptions{Command: p, Env: tc.env})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Exec: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), `exec handler: command "`+p+`" `) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Exec error %v, want one naming the command and saying %q", err, tc.want)
			}
		})
	}
}

// A command that ignores a large body on stdin still succeeds.
func TestExec_UnreadStdinIsNotAFailure(t *testing.T) {
	h := mustExec(t, ExecOptions{Command: script(t, t.TempDir(), "s", "exit 0")})
	m := testMessage(0)
	m.Body = make([]byte, 4<<20)
	if r := h(context.Background(), m); r.Outcome != pump.Ack || r.Err != nil {
		t.Fatalf("%+v", r)
	}
}

func TestExec_OutputCaptureIsBounded(t *testing.T) {
	logger, lb := newTestLogger()
	h := mustExec(t, ExecOptions{Command: script(t, t.TempDir(), "s", `head -c 200000 /dev/zero | tr '\0' 'o'`), Logger: logger})
	if r := h(context.Background(), testMessage(0)); r.Outcome != pump.Ack {
		t.Fatalf("%+v", r)
	}
	out, _ := lb.find(t, msgExecOK)["stdout"].(string)
	if len(out) > MaxCapture+32 || !strings.HasSuffix(out, "[truncated]") {
		t.Fatalf("captured %d bytes, suffix %q", len(out), out[max(0, len(out)-20):])
	}
}

func TestExec_ConfigErrors(t *testing.T) {
	for name, opts := range map[string]ExecOptions{
		"empty command":   {},
		"missing command": {Command: "brighter-no-such-command-xyz"},
		"bad env entry":   {Command: "true", Env: []string{"NOVALUE"}},
	} {
		if _, err := Exec(opts); err == nil {
			t.Errorf("%s: Exec succeeded", name)
		}
	}
}

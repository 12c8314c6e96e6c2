//go:build linux

package consume_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/consume"
	"github.com/brightergo/brighter/internal/pump"
)

// TestConsumeStop_EndsTermIgnoringHandlerGroup (fauxqs, both pump
// variants): an exec handler whose command and background child both
// ignore SIGTERM is running when consume gets one SIGTERM (drainTimeout
// 1s). consume exits 0 only once no process of the handler's group is
// alive (SIGTERM, then SIGKILL after the kill grace), logs the cut-off,
// and releases the message: it is received again at once, long before its
// 60s visibility timeout.
func TestConsumeStop_EndsTermIgnoringHandlerGroup(t *testing.T) {
	stopEndsHandlerGroup(t, false)
}

// TestConsumeSecondSignal_EndsTermIgnoringHandlerGroup (fauxqs, both pump
// variants): as TestConsumeStop_EndsTermIgnoringHandlerGroup, with a
// drainTimeout of a minute and a second SIGTERM a second after the first:
// consume exits 1, with no process of the handler's group alive, the
// message released, and the run's last line the JSON "brighter: run
// failed" record with exit_code 1.
func TestConsumeSecondSignal_EndsTermIgnoringHandlerGroup(t *testing.T) {
	stopEndsHandlerGroup(t, true)
}

// stopEndsHandlerGroup is the two tests above: one SIGTERM, or two a
// second apart (second).
func stopEndsHandlerGroup(t *testing.T, second bool) {
	emu := cmdtest.SharedSQS(t)
	drain := "1s"
	if second {
		drain = "1m"
	}
	for _, variant := range []string{"reactor", "proactor"} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			queue := fmt.Sprintf("trap-%s-%d", variant, time.Now().UnixNano()%1e9)
			script := filepath.Join(dir, "h.sh")
			listenMust(t, os.WriteFile(script, []byte(`#!/bin/sh
trap '' TERM
DIR=$(dirname "$0")
echo $$ > "$DIR/group"
sleep 103 &
echo $! > "$DIR/child"
touch "$DIR/started"
sleep 103
`), 0o755))
			cfg := filepath.Join(dir, "b.yaml")
			listenMust(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`connections:
  aws: {region: %s, endpoint: %s}
subscriptions:
  - name: %s
    transport: sqs
    messagePumpType: %s
    timeOut: 1s
    requeueCount: 3
    drainTimeout: %s
    deadLetterRoutingKey: %s-dlq
    handler: {type: exec, command: ./h.sh, timeout: 300s}
    sqs: {channelType: pointToPoint, visibilityTimeout: 60s}
`, sqstest.Region, emu.Endpoint, queue, variant, drain, queue)), 0o600))
			p := startConsume(t, dir, cfg)
			cmdtest.Brighter(t, dir, "send", "--config", cfg, "--subscription", queue, "--id", "trap-1", "--body", "{}")
			waitFor(t, 30*time.Second, "the handler to start", func() bool {
				_, err := os.Stat(filepath.Join(dir, "started"))
				return err == nil
			}, p)
			pgid, child := readPidFile(t, dir, "group"), readPidFile(t, dir, "child")
			sent := time.Now()
			if second {
				p.forceStop(t)
			} else {
				p.terminate(t)
			}
			t.Logf("consume exited %s after the first SIGTERM", time.Since(sent).Round(time.Millisecond))
			if pids := groupMembers(pgid); len(pids) > 0 {
				for _, pid := range pids {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Fatalf("processes %v of the handler's group %d outlived consume; stderr:\n%s", pids, pgid, p.stderr.String())
			}
			if procAlive(child) {
				_ = syscall.Kill(child, syscall.SIGKILL)
				t.Fatalf("the handler's background child %d outlived consume", child)
			}
			logs := p.stderr.String()
			if !strings.Contains(logs, pump.LogCutOff) {
				t.Errorf("stderr lacks %q:\n%s", pump.LogCutOff, logs)
			}
			c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint).SQS
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			u, err := c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
			listenMust(t, err)
			out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: u.QueueUrl, WaitTimeSeconds: 2, MaxNumberOfMessages: 1})
			listenMust(t, err)
			if len(out.Messages) != 1 {
				t.Fatalf("received %d messages right after the stop, want the released one; stderr:\n%s", len(out.Messages), logs)
			}
		})
	}
}

// forceStop sends SIGTERM, waits for consume to log that it took it
// (LogConsumeStopping), sends another once the signal-merge window has
// passed since (cmdutil.SignalMergeWindow), and requires the
// process to exit 1 within a minute with the JSON final record (msg
// cmdutil.MsgRunFailed, exit_code 1) as its last line.
func (p *consumeProc) forceStop(t *testing.T) {
	t.Helper()
	listenMust(t, p.cmd.Process.Signal(syscall.SIGTERM))
	waitFor(t, 10*time.Second, "consume to take the first signal", func() bool {
		return strings.Contains(p.stderr.String(), consume.LogConsumeStopping)
	}, p)
	// The gap under test, not a wait for something: a signal within the
	// merge window is the same stop, one past it is a second signal.
	time.Sleep(cmdutil.SignalMergeWindow + 200*time.Millisecond)
	listenMust(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case p.err = <-p.done:
		p.exited = true
	case <-time.After(time.Minute):
		t.Fatalf("consume did not exit within a minute of the second SIGTERM; stderr:\n%s", p.stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) || ee.ExitCode() != cmdutil.ExitFailure {
		t.Fatalf("consume ended with %v, want exit %d; stderr:\n%s", p.err, cmdutil.ExitFailure, p.stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["msg"] != cmdutil.MsgRunFailed || last["exit_code"] != float64(cmdutil.ExitFailure) || !strings.Contains(fmt.Sprint(last["error"]), "second signal") {
		t.Fatalf("last line %q, want the %q record with exit_code %d; stderr:\n%s", lines[len(lines)-1], cmdutil.MsgRunFailed, cmdutil.ExitFailure, p.stderr.String())
	}
}

// readPidFile reads the process id a handler script wrote to dir/name.
func readPidFile(t *testing.T, dir, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	listenMust(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("%s holds %q", name, b)
	}
	return pid
}

// procGroupState returns the process group and state of pid from
// /proc/PID/stat (ok false when there is no such process).
func procGroupState(pid int) (pgid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(f[2])
	return g, f[0][0], err == nil
}

// procAlive reports whether pid is a process that is not a zombie.
func procAlive(pid int) bool {
	_, state, ok := procGroupState(pid)
	return ok && state != 'Z' && state != 'X'
}

// groupMembers lists the live (not zombie) processes of group pgid.
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, state, ok := procGroupState(pid); ok && g == pgid && state != 'Z' && state != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

package consume_test

import (
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

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/consume"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// startHangupConsume starts `brighter consume` (prefix before it, e.g.
// nohup) over a memory subscription of the given pump variant whose exec
// handler leaves a `sleep 30` running in its process group, and waits
// until the handler has started. It returns the process and the sleep's
// pid.
func startHangupConsume(t *testing.T, variant string, prefix ...string) (*consumeProc, int) {
	t.Helper()
	dir := t.TempDir()
	writeExecSeedConfig(t, dir, "hup", variant, "sleep 30 & echo $! > child; touch started; wait")
	p := &consumeProc{stderr: &cmdtest.LockedBuffer{}}
	args := append(append([]string(nil), prefix...), "brighter", "consume", "--config", "brighter.yaml", "--log-format", "json")
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Dir = dir
	p.cmd.Env = cmdtest.Env()
	p.start(t)
	waitFor(t, 30*time.Second, "the handler to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	}, p)
	b, err := os.ReadFile(filepath.Join(dir, "child"))
	listenMust(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	listenMust(t, err)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return p, pid
}

// alive reports whether pid is a process that has not exited (a zombie
// awaiting its reaper has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil && !errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestConsumeSIGHUP_DrainsAsSIGTERM: a SIGHUP (the terminal closed, an ssh
// session dropped) is a stop request: consume logs that it drains, cuts
// the running exec handler off at drainTimeout with its process group
// (the handler's `sleep 30` is gone), logs `consume stopped` and exits 0,
// within drainTimeout + 5s. It did die of the signal at once, exit 129,
// with no log line and the sleep left running. Both pump variants.
func TestConsumeSIGHUP_DrainsAsSIGTERM(t *testing.T) {
	stopVariants(t, func(t *testing.T, variant string) {
		p, child := startHangupConsume(t, variant)
		if !alive(child) {
			t.Fatalf("the handler's sleep %d is not running before the stop", child)
		}
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatalf("SIGHUP: %v", err)
		}
		select {
		case p.err = <-p.done:
			p.exited = true
		case <-time.After(stopBound):
			t.Fatalf("consume still running %s after SIGHUP (drainTimeout %s); stderr:\n%s", stopBound, stopDrain, p.stderr.String())
		}
		logs := p.stderr.String()
		if p.err != nil {
			t.Fatalf("consume ended with %v after SIGHUP, want a drain and exit 0; stderr:\n%s", p.err, logs)
		}
		for _, want := range []string{consume.LogConsumeStopping, pump.LogCutOff, consume.LogConsumeStopped} {
			if !strings.Contains(logs, `"msg":"`+want+`"`) {
				t.Errorf("stderr lacks %q:\n%s", want, logs)
			}
		}
		waitFor(t, 5*time.Second, "the handler's sleep to end with its process group", func() bool { return !alive(child) })
	})
}

// TestConsumeSIGHUP_IgnoredUnderNohup: started with SIGHUP ignored
// (nohup), consume keeps it ignored: a SIGHUP neither stops nor kills it,
// and a SIGTERM then drains it as usual.
func TestConsumeSIGHUP_IgnoredUnderNohup(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Fatalf("nohup (coreutils) is not on PATH: %v", err)
	}
	p, _ := startHangupConsume(t, "reactor", nohup)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatalf("SIGHUP: %v", err)
	}
	// Half a second is long enough for a stop to be logged or the process to die.
	polltest.Stays(t, 500*time.Millisecond, "under nohup a SIGHUP left consume running, its stop not logged", func() bool {
		return !p.gone() && !strings.Contains(p.stderr.String(), consume.LogConsumeStopping)
	})
	p.terminate(t)
}

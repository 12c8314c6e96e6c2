package replay

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/transport"
)

// TestDLQReplay_InterruptAtConfirmationExits130: SIGINT while the
// replay waits at its confirmation prompt (a terminal that never answers)
// ends the wait at once with exit 130, "interrupted" and nothing moved, as
// every interrupted dlq command does; declining stays exit 2.
func TestDLQReplay_InterruptAtConfirmationExits130(t *testing.T) {
	t.Parallel()
	path := cmdtest.WriteMemoryDLQ(t, 2)
	never, w := io.Pipe() // the operator never answers
	defer w.Close()
	var out, errOut cmdtest.LockedBuffer
	streams := &iostreams.IOStreams{In: never, Out: &out, ErrOut: &errOut, InTTY: true, Getenv: os.LookupEnv}
	sigs := make(chan os.Signal, 2)
	exited := -1
	f := &factory.Factory{IOStreams: streams, Transports: transport.Default,
		Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} },
		Exit:    func(code int) { exited = code }}
	cmd := NewCmdReplay(f, nil)
	cmd.SetArgs([]string{"memory://orders-dlq?file=" + path, "--confirm-over", "1"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(context.Background()) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), "[y/N] ") {
		if time.Now().After(deadline) {
			t.Fatalf("no confirmation prompt within 30s:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	sigs <- syscall.SIGINT
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the replay still waits for an answer 30s after SIGINT:\n%s", errOut.String())
	}
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != shared.ExitInterrupted {
		t.Fatalf("error %v, want exit code %d\nstderr:\n%s", err, shared.ExitInterrupted, errOut.String())
	}
	if exited != -1 {
		t.Errorf("one signal forced exit %d; it must stop cleanly", exited)
	}
	if !strings.Contains(errOut.String(), "interrupted at the confirmation; nothing was replayed") {
		t.Errorf("stderr does not say the replay was interrupted at the prompt:\n%s", errOut.String())
	}
	after, _ := os.ReadFile(path)
	for _, id := range []string{"p0", "p1"} {
		if !strings.Contains(string(after), `"id":"`+id+`","topic":"orders-dlq"`) {
			t.Errorf("an interrupted replay moved %s:\n%s", id, after)
		}
	}
}

package dlq

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/transport"
)

// TestDLQ_Interrupt_ReleasesAndExits130 sends SIGINT (an injected signal)
// to peek, stats and replay while they scan an SQS queue on fauxqs: each
// exits 130, says it was interrupted, and every message is visible again
// at once (not after --visibility), so stats right after counts them all.
func TestDLQ_Interrupt_ReleasesAndExits130(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	const n = 15
	queue, _, conn := dlqtest.CrashQueue(t, n)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	invisible := func() int {
		v, _ := dlqtest.QueueCount(c, queue, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)
		return v
	}
	visible := func() int {
		v, err := dlqtest.QueueCount(c, queue, types.QueueAttributeNameApproximateNumberOfMessages)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	base := append(append([]string{"sqs://" + queue}, conn...), "--wait", "2s")
	for _, args := range [][]string{
		{"peek"},
		{"stats"},
		// an interrupted replay keeps its journal: here, not under $HOME
		{"replay", "--to", queue + "-nowhere", "--yes", "--journal", filepath.Join(t.TempDir(), "replay.journal")},
	} {
		t.Run(args[0], func(t *testing.T) {
			var out, errOut bytes.Buffer
			io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
			sigs := make(chan os.Signal, 2)
			// The signal arrives once the scan holds messages (a signal
			// before it would stop the command while it connects).
			scanning, stopPoll := make(chan struct{}), make(chan struct{})
			defer close(stopPoll)
			go func() {
				for {
					select {
					case <-stopPoll:
						return
					case <-time.After(20 * time.Millisecond):
					}
					if invisible() > 0 {
						close(scanning)
						sigs <- syscall.SIGINT
						return
					}
				}
			}()
			exited := -1
			f := &factory.Factory{IOStreams: io, Transports: transport.Default,
				Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} },
				Exit:    func(code int) { exited = code }}
			cmd := NewCmdDLQ(f)
			cmd.SetArgs(append(args, base...))
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			err := cmd.ExecuteContext(context.Background())
			select {
			case <-scanning:
			default:
				t.Fatalf("the run ended before its scan held a message: %v; stderr:\n%s", err, errOut.String())
			}
			var ee *cmdutil.ExitError
			if !errors.As(err, &ee) || ee.Code != shared.ExitInterrupted {
				t.Fatalf("error %v, want exit code %d; stderr:\n%s", err, shared.ExitInterrupted, errOut.String())
			}
			if exited != -1 {
				t.Errorf("one signal forced exit %d; it must stop cleanly", exited)
			}
			if !strings.Contains(errOut.String(), "interrupted") {
				t.Errorf("stderr does not say the run was interrupted:\n%s", errOut.String())
			}
			if v := visible(); v != n {
				t.Fatalf("%d of %d messages visible right after the interrupted %s, want all", v, n, args[0])
			}
		})
	}
}

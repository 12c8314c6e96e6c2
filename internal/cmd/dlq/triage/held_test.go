package triage

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQTriage_TmuxSaysHeld: the console, in a real terminal
// (tmux, 80x24), says on its status line how many messages another reader
// held invisible when it read the dead-letter queue (fauxqs).
func TestDLQTriage_TmuxSaysHeld(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "th", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	for i := range 2 {
		if err := p.Send(ctx, dlqtest.Stamped(fmt.Sprintf("t%d-%s", i, run), dest, dlq)); err != nil {
			t.Fatal(err)
		}
	}
	dlqtest.HoldMessages(t, dlq, 1, 60*time.Second)
	exitFile := filepath.Join(t.TempDir(), "exit")
	command := fmt.Sprintf("%s dlq triage sqs://%s --to %s --visibility 30s %s; echo $? > %s", cmdtest.Bin(t), dlq, dest, strings.Join(conn, " "), exitFile)
	s := startTriage(t, run, command, []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1"})
	s.AwaitText("1 more message held invisible by another reader")
	s.Keys(true, "q")
	s.AwaitExit(exitFile)
}

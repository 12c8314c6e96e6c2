package dlqtest

import (
	"os/exec"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// OneDeadLetter makes the queue dlq-RUN on the shared fauxqs
// (FauxqsQueues: RUN is prefix and a number unique to the call) holding
// one dead letter, PREFIX-RUN, routed from orders; it returns the queue,
// the message id and the flags that reach fauxqs.
func OneDeadLetter(t *testing.T, prefix string) (dlq, id string, conn []string) {
	t.Helper()
	run, p, conn := FauxqsQueues(t, prefix, "dlq")
	dlq, id = "dlq-"+run, prefix+"-"+run
	if err := p.Send(t.Context(), Stamped(id, "orders", dlq)); err != nil {
		t.Fatal(err)
	}
	return dlq, id, conn
}

// StartPeek starts `brighter dlq peek sqs://DLQ FLAGS... -o json CONN...`
// as a process in a temporary directory, through launcher ("brighter", or
// a command such as nohup that execs its arguments in the same process),
// and returns once it has printed the message id: its scan has visited the
// receive that brought it, holds it invisible (for --visibility) and waits
// in its next receive (for --wait). It fails t when peek exits first or
// prints no id within 30s.
func StartPeek(t *testing.T, launcher, dlq, id string, conn []string, flags ...string) *cmdtest.Process {
	t.Helper()
	args := append(append(append([]string{"dlq", "peek", "sqs://" + dlq}, flags...), "-o", "json"), conn...)
	if launcher != "brighter" {
		args = append([]string{"brighter"}, args...)
	}
	cmd := exec.Command(launcher, args...)
	cmd.Dir, cmd.Env = t.TempDir(), cmdtest.Env()
	p := cmdtest.Start(t, cmd)
	p.AwaitStdout(t, id)
	return p
}

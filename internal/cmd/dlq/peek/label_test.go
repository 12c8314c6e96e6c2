package peek

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQPeek_SaysRedriveOnlyOfARedriveTarget: a fresh message on a
// source queue carries no rejection metadata, as a message moved by a
// broker's redrive does; `dlq peek` labels it "moved by broker redrive"
// only when it reads the subscription's native redrive target, and
// "no rejection metadata" when it reads a queue given by URL (fauxqs).
func TestDLQPeek_SaysRedriveOnlyOfARedriveTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "rd", "orders", "redrive")
	orders, redrive := "orders-"+run, "redrive-"+run
	for _, q := range []string{orders, redrive} {
		if err := p.Send(ctx, message.New("fresh-"+q, q, message.MTCommand, []byte(`{}`))); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	file := dlqtest.RedriveSubscriptions(t, conn, orders, redrive, true)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"source queue by URL", append([]string{"dlq", "peek", "sqs://" + orders, "--wait", "1s"}, conn...), "no rejection metadata"},
		{"dead-letter queue by URL", append([]string{"dlq", "peek", "sqs://" + redrive, "--wait", "1s"}, conn...), "no rejection metadata"},
		{"native redrive target", []string{"dlq", "peek", "orders", "--native", "-c", file, "--wait", "1s"}, "moved by broker redrive"},
		{"dead-letter destination that is the redrive target", []string{"dlq", "peek", "orders", "-c", file, "--wait", "1s"}, "moved by broker redrive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := cmdtest.BrighterExit(t, dir, c.args...)
			if code != cmdutil.ExitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			other := "moved by broker redrive"
			if c.want == other {
				other = "no rejection metadata"
			}
			if !strings.Contains(out, c.want) || strings.Contains(out, other) {
				t.Errorf("peek says %q, want %q:\n%s", other, c.want, out)
			}
		})
	}
}

// TestDLQPeek_KeepsTheDifferingPartReadable: two budget rejections that
// differ only in how often they were handled in this process are told apart in the
// peek table by a readable part, not "…2 times in this process)" (fauxqs).
func TestDLQPeek_KeepsTheDifferingPartReadable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "fd", "dlq")
	dlq := "dlq-" + run
	for i, handled := range []string{"2 times", "3 times"} {
		m := message.New(fmt.Sprintf("f%d-%s", i, run), "orders", message.MTCommand, []byte(`{}`))
		why := "redelivery budget exhausted: delivery count 5 reached requeueCount 5 (delivered 5 times, handled " + handled + " in this process)"
		if err := p.Send(ctx, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: why}, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := cmdtest.BrighterExit(t, t.TempDir(), append([]string{"dlq", "peek", "sqs://" + dlq, "--wait", "1s"}, conn...)...)
	if code != cmdutil.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"…handled 2 times in this process)", "…handled 3 times in this process)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the peek table lacks %q:\n%s", want, out)
		}
	}
}

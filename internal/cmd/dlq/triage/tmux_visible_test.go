package triage

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQTriage_TmuxRefreshHidesNothing: on fauxqs, a console refreshing
// every second with --visibility 5m never keeps the dead letters from
// another consumer: while it re-reads, another consumer's short polls find
// the message nearly every time (a re-read releases each receive at once;
// one holding its reads until the scan ended hid them about half the time),
// and the console still shows every message and one dead-lettered meanwhile.
func TestDLQTriage_TmuxRefreshHidesNothing(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	f := newTriageSQS(t)
	emu, c := f.emu, f.c
	ctx := context.Background()
	run := fmt.Sprintf("vis%d", time.Now().UnixNano()%1e9)
	dlq, dest := "triage-dlq-"+run, "triage-dest-"+run
	f.queues(t, dlq, dest)
	now := time.Now()
	for i := range 4 {
		f.send(t, budgetSpent(fmt.Sprintf("v%d-%s", i, run), "payments", dlq, "card declined", 4000+i, now.Add(-time.Duration(i)*time.Minute)))
	}
	exitFile := filepath.Join(t.TempDir(), "exit")
	command := fmt.Sprintf("%s dlq triage sqs://%s --to %s --refresh 1s --visibility 5m --endpoint %s --region %s; echo $? > %s",
		cmdtest.Bin(t), dlq, dest, emu.Endpoint, sqstest.Region, exitFile)
	s := startTriageAt(t, run, command, []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1"}, 120, 30)
	s.AwaitText("redelivery budget exhausted")
	s.Keys(false, "Enter")
	s.Await("the four messages", func(sc string) bool {
		for i := range 4 {
			if !strings.Contains(sc, fmt.Sprintf("v%d-%s", i, run)) {
				return false
			}
		}
		return true
	})

	// another consumer of the dead-letter queue, short polls while the
	// console re-reads every second
	other, err := sqs.NewConsumer(c, sqs.ConsumerOptions{Queue: dlq, BufferSize: sqs.MaxBufferSize, VisibilityTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	const tries = 30
	missed := 0
	for range tries {
		ms, err := other.Receive(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range ms {
			found = found || m.Header.MessageID == "v0-"+run
			if err := other.Requeue(ctx, m, 0); err != nil {
				t.Fatal(err)
			}
		}
		if !found {
			missed++
		}
		time.Sleep(150 * time.Millisecond) // the pace of the other consumer's polls, not a wait for the console
	}
	if missed > 3 {
		t.Errorf("another consumer's short poll missed the message %d times of %d while the console refreshed: the refresh hides the dead letters", missed, tries)
	}

	// the console kept reading through it: a dead letter of now shows
	late := message.New("late-"+run, "billing", message.MTCommand, []byte(`{}`))
	f.send(t, message.Stamp(late, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "ledger closed for the day"}, time.Now()))
	s.Keys(false, "Escape")
	s.Await("the late dead letter and the four", func(sc string) bool {
		return strings.Contains(sc, "ledger closed for the day") && strings.Contains(sc, "    4 ")
	})
	s.Keys(true, "q")
	s.AwaitExit(exitFile)
}

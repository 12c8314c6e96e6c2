package triage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// TestDLQTriage_TmuxEndToEnd_RocketMQ: the console driven in a
// real terminal (tmux, 80x24, NO_COLOR) on the RocketMQ test broker (the
// real client): open, filter a failure group, open a message, edit it
// (EDITOR a script that rewrites the body) and replay the edited copy to a
// topic, archive the other message of the group, quit; then, from outside
// with dlq peek, the dead-letter topic read by the console's reader group
// holds only the untouched message of the other group, a new group reads
// the edited copy at the destination, and the archive file holds the
// archived one.
func TestDLQTriage_TmuxEndToEnd_RocketMQ(t *testing.T) {
	t.Parallel()
	cmdtest.NeedTmux(t, "the console")
	srv, err := rmqtest.Start(rmqtest.Options{AutoCreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	run := fmt.Sprintf("tr%d", time.Now().UnixNano()%1e9)
	dlq, dest := "triage-dlq-"+run, "triage-dest-"+run
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmq.Connection{Endpoint: srv.Endpoint(), ClientLogDir: t.TempDir()}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close(ctx) }()
	for _, m := range triageMessages(run, "orders-"+run, dlq) {
		if err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	peek := func(url string) func() string {
		return func() string {
			return cmdtest.Brighter(t, t.TempDir(), "dlq", "peek", url, "--rocketmq-endpoint", srv.Endpoint(), "-o", "json")
		}
	}
	reader := "rocketmq://" + dlq + "?group=reader-" + run
	triageEditArchiveQuit(t, run, fmt.Sprintf("'%s' --to rocketmq://%s --rocketmq-endpoint %s", reader, dest, srv.Endpoint()),
		[]string{"NO_COLOR=1"}, peek(reader), peek("rocketmq://"+dest+"?group=check-"+run))
}

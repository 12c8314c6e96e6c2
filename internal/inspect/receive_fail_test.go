package inspect_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
)

// TestScan_EveryReceiveFails_IsAnError: on a broker that answers
// GetQueueUrl and fails every ReceiveMessage, peek, stats, count and replay
// each return the receive's error after their retries, never an empty
// dead-letter queue (which would say "0 shown, 0 read" and exit 0); replay
// publishes nothing. The dead-letter queue holds messages all along.
func TestScan_EveryReceiveFails_IsAnError(t *testing.T) {
	c := clients(t)
	dlq, dest, _ := seedDLQ(t, c)
	injected := errors.New("injected: connection reset on every receive")
	fc, calls := countingClients(t, func(op string) error {
		if op == "ReceiveMessage" {
			return injected
		}
		return nil
	})
	check := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), injected.Error()) || !strings.Contains(err.Error(), "receive from sqs://"+dlq) {
			t.Errorf("%s: error %v, want the failed receive from %s", what, err, dlq)
		}
	}
	newSource := func() *inspect.Source {
		src := source(reader(t, fc, dlq, false), dlq)
		src.Logger = discardLogger()
		return src
	}
	ctx := context.Background()
	counts, err := inspect.Peek(ctx, newSource(), inspect.Filter{}, inspect.NewJSONLines(&strings.Builder{}))
	check("peek", err)
	if counts.Scanned != 0 {
		t.Errorf("peek scanned %d", counts.Scanned)
	}
	_, _, err = inspect.Collect(ctx, newSource(), inspect.Filter{})
	check("stats", err)
	_, err = inspect.Count(ctx, newSource(), inspect.Filter{})
	check("count", err)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(ctx, newSource(), dlq, p, inspect.Filter{}, inspect.ReplayOptions{})
	check("replay", err)
	if sum.Replayed != 0 {
		t.Errorf("replay summary %+v, want nothing replayed", sum)
	}
	if n := calls.count("ReceiveMessage"); n < 4*3 {
		t.Errorf("%d ReceiveMessage calls, want each command to retry (3 tries each)", n)
	}
	if n := depth(t, c, dlq); n != 5 {
		t.Errorf("dead-letter depth %d, want the 5 seeded", n)
	}
	if n := depth(t, c, dest); n != 0 {
		t.Errorf("destination depth %d, want 0", n)
	}
}

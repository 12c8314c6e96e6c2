package conformance

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/brightergo/brighter/internal/pump"
)

// keyHold is the set-up the rows of a key held back share (ackhold.go,
// lapsehold.go): an ordered channel opened with orderedLease and FIFO
// batches, the row's messages of one partition key sent in order, and a
// recording consumer over the channel, on which the row injects its
// faults.
type keyHold struct {
	logger *slog.Logger
	logs   *LogBuffer
	ch     Channel
	// ids are the messages' ids in the order sent; seq maps an id to its
	// place.
	ids []string
	seq map[string]int
	rec *RecordingConsumer
}

// openKeyHold opens f's channel as the key-hold rows do and sends n
// messages of one partition key in order.
func openKeyHold(t *testing.T, f Fixture, n int) *keyHold {
	t.Helper()
	logger, logs := NewLogger()
	logOnFailure(t, logs)
	ch := f.Open(t, Setup{RequeueCount: -1, Lease: orderedLease, Logger: logger, FIFOBatches: true})
	base := uniqueID(t)
	k := &keyHold{logger: logger, logs: logs, ch: ch, ids: make([]string, n), seq: map[string]int{}}
	for s := range k.ids {
		k.ids[s] = fmt.Sprintf("%s-%d", base, s)
		k.seq[k.ids[s]] = s
		m := newMessage(f, k.ids[s])
		m.Header.PartitionKey = base + "-key"
		ch.Send(t, m)
	}
	k.rec = NewRecordingConsumer(ch.Consumer(t, orderBuffer))
	return k
}

// options are the pump options of the key-hold rows in variant v: no
// redelivery budget, the ordering rows' buffer and performers.
func (k *keyHold) options(v pump.Variant) pump.Options {
	opts := pumpOptions(v, -1)
	opts.BufferSize, opts.NoOfPerformers = orderBuffer, orderPerformers
	return opts
}

// allAcked reports whether the broker accepted an acknowledgement of
// every message of the key: a pass never comes from a broker (Google's
// emulator) that stopped redelivering.
func (k *keyHold) allAcked() bool {
	for _, id := range k.ids {
		if k.rec.Acks(id) == 0 {
			return false
		}
	}
	return true
}

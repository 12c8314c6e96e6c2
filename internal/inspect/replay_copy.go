package inspect

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// ReplayCopy returns the message to publish for m, read from the source
// named from (a URL), and its destination. The copy keeps m's id (or gets a
// new one with NewID), body, attributes, bag and correlation id; loses the
// five rejection keys, the pump's RejectionReason text and the receipt;
// records replayedFrom and replayedAt (RFC 3339, UTC); has HandledCount 0
// unless KeepCount; has no delay; and, when it has a partition key (a FIFO
// group), keeps it with a fresh deduplication id. The destination is o.To,
// else the originalTopic (for a message without rejection metadata, its
// own topic; when that is empty or self, the destination being read,
// o.RedriveSource's answer, which o.Allow is not asked about); it returns
// ErrNoRedriveSource for a message without rejection metadata that names
// no other destination when no redrive source is known, ErrNoDestination for
// any other message whose originalTopic is empty or self, and ErrRefused,
// with the destination, when o.Allow refuses it.
func ReplayCopy(m *message.Message, from, self string, o ReplayOptions, now time.Time) (*message.Message, string, error) {
	dest := o.To
	if dest == "" {
		d := Describe(m)
		dest = d.OriginalTopic
		redrive := false
		if d.NativeRedrive && (dest == "" || dest == self) && o.RedriveSource != nil {
			// Named by the subscriptions file or by the broker's own
			// redrive policy, not by whoever wrote the message: no
			// allow-list check.
			if src := o.RedriveSource(); src != "" {
				dest, redrive = src, true
			}
		}
		switch {
		case (dest == "" || dest == self) && d.NativeRedrive:
			return nil, "", fmt.Errorf("message %s: %w", m.Header.MessageID, ErrNoRedriveSource)
		case dest == "" || dest == self:
			return nil, "", fmt.Errorf("message %s: %w", m.Header.MessageID, ErrNoDestination)
		case !redrive && o.Allow != nil && !o.Allow(dest):
			return nil, dest, fmt.Errorf("message %s to %s: %w", m.Header.MessageID, redact.Quote(redact.URL(dest)), ErrRefused)
		}
		if o.Route != nil {
			dest = o.Route(dest)
		}
	}
	c := m.Clone()
	c.Receipt, c.DeliveryAttempt = nil, 0
	message.StripRejection(c.Header.Bag)
	delete(c.Header.Bag, "ReceiptHandle")
	c.Header.Bag[message.KeyReplayedFrom] = from
	c.Header.Bag[message.KeyReplayedAt] = now.UTC().Format(time.RFC3339Nano)
	c.Header.Bag[KeyReplayID] = ReplayID(m, from)
	if c.Header.PartitionKey != "" {
		c.Header.Bag[KeyDeduplicationID] = uuid.NewString()
	} else {
		delete(c.Header.Bag, KeyDeduplicationID)
	}
	if o.NewID {
		c.Header.MessageID = uuid.NewString()
	}
	if !o.KeepCount {
		c.Header.HandledCount = 0
	}
	c.Header.Delay = 0
	c.Header.Topic = dest
	return c, dest, nil
}

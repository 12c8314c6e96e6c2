package shared

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

// replayTo resolves --to for a replay from t, before anything is read: a
// URL of t's transport (sqs://QUEUE, pubsub://projects/P/topics/T,
// rocketmq://TOPIC, memory://QUEUE) becomes the name its producer publishes
// to. An explicitly empty --to, a URL of another transport, and a --to that
// resolves (as the transport resolves names) to the destination being read
// are usage errors: a replay into its own dead-letter destination would
// only strip the messages' rejection metadata. "" means each message's
// originalTopic.
func (o *ReplayOptions) replayTo(ctx context.Context, t *transport.Target, dt transport.Transport, logger *slog.Logger) (string, error) {
	if !o.ToSet {
		return "", nil
	}
	raw := o.To
	if strings.TrimSpace(raw) == "" {
		return "", cmdutil.UsageErr(errors.New("--to is empty: give a topic or queue, or leave --to out to replay each message to its originalTopic"))
	}
	name, err := ToName(t, dt, raw)
	if err != nil {
		return "", cmdutil.UsageErr(fmt.Errorf("--to %q: %w", redact.Quoted(raw), err))
	}
	self, err := isSelf(ctx, t, dt, name, logger)
	if err != nil {
		return "", err
	}
	if self {
		return "", cmdutil.UsageErr(fmt.Errorf("--to %q: that is %s, the dead-letter destination being read; replaying into it would only strip its messages' rejection metadata (leave --to out to replay each message to its originalTopic)", redact.Quoted(raw), redact.Cut(t.URL)))
	}
	return name, nil
}

// ToName turns --to into the name t's producer publishes to, as the
// scheme of t's transport reads it (a name, or a URL of that scheme).
func ToName(t *transport.Target, dt transport.Transport, raw string) (string, error) {
	as := dt.Addresses()
	if scheme, _, isURL := strings.Cut(raw, "://"); isURL && scheme != as.Forms().Scheme {
		return "", fmt.Errorf("a URL of scheme %s, but %s is read over %s: give a name, or a URL of the form %s", redact.Cut(scheme), redact.Cut(t.URL), t.S.Transport, as.Forms().Publish)
	}
	return as.PublishName(raw, dt.ReplayFrom(t))
}

// isSelf reports whether name, as t's transport resolves it, is the
// destination t reads: asked of the broker when the transport can ask it
// (within a few seconds), else as the subscriptions file names it.
func isSelf(ctx context.Context, t *transport.Target, dt transport.Transport, name string, logger *slog.Logger) (bool, error) {
	self := dt.ReplayFrom(t)
	if asker, ok := dt.(transport.ReplaySourceAsker); ok {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		source, err := asker.ReplaySource(lctx, t)
		cancel()
		if err == nil && source != "" {
			self.Name = source
		} else {
			logger.Debug("could not look up the subscription's topic; comparing --to with the configured name", "subscription", t.URL, "error", err)
		}
	}
	return dt.Addresses().Same(name, self), nil
}

package transport

import (
	"errors"
	"fmt"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
)

// missingFix is err, consume's makeChannels validate failing on channels
// that do not exist (sqs.ErrMissingChannels, gcp.ErrChannelMissing,
// rocketmq.ErrTopicMissing), with what to do added: create them with the
// transport's own tool, or let consume make them at start-up with
// makeChannels: create. Any other err (nil too) is returned as it is.
func missingFix(err error, s *config.Subscription) error {
	var how string
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sqs.ErrMissingChannels):
		how = "aws sqs create-queue --queue-name NAME (aws sns create-topic and subscribe for a topic), with --endpoint-url for an emulator"
	case errors.Is(err, gcp.ErrChannelMissing):
		how = "gcloud pubsub topics create NAME, gcloud pubsub subscriptions create NAME --topic TOPIC (or the emulator's REST API)"
	case errors.Is(err, rocketmq.ErrTopicMissing):
		how = "mqadmin updateTopic -t NAME on the cluster"
	default:
		return err
	}
	return fmt.Errorf("%w; to fix, create what is missing (%s), or set makeChannels: create on subscription %s, which makes it at start-up", err, how, s.Name)
}

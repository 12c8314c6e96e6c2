package dlq

import (
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/dlq/archive"
	"github.com/brightergo/brighter/internal/cmd/dlq/edit"
	"github.com/brightergo/brighter/internal/cmd/dlq/peek"
	"github.com/brightergo/brighter/internal/cmd/dlq/purge"
	"github.com/brightergo/brighter/internal/cmd/dlq/replay"
	"github.com/brightergo/brighter/internal/cmd/dlq/restore"
	"github.com/brightergo/brighter/internal/cmd/dlq/stats"
	"github.com/brightergo/brighter/internal/cmd/dlq/triage"
	"github.com/brightergo/brighter/internal/cmd/factory"
)

// NewCmdDLQ returns the dlq command with its verbs, each a package of its
// own under internal/cmd/dlq built from f.
func NewCmdDLQ(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Inspect, summarise and replay dead-lettered messages",
		Long: `Inspect the messages a subscription's consumers dead-lettered, find out why,
and put a chosen set back where they came from.

A destination is a subscription of the subscriptions file (its
deadLetterRoutingKey by default, --invalid for invalidMessageRoutingKey,
--native for the broker's own redrive target) or a URL:

  sqs://QUEUE                       an SQS queue (FIFO when it ends in .fifo);
                                    connection from --region, --endpoint,
                                    --profile and the AWS environment
  pubsub://projects/P/subscriptions/S
                                    a Pub/Sub subscription; an emulator from
                                    --endpoint or PUBSUB_EMULATOR_HOST, else
                                    the service with Application Default
                                    Credentials; replays go to topics of P
  rocketmq://TOPIC?group=G          a RocketMQ topic (a rejection topic or
                                    %DLQ%<group>) read by consumer group G
                                    (default brighter-dlq-reader); proxy from
                                    --rocketmq-endpoint or ROCKETMQ_ENDPOINT
                                    (ROCKETMQ_NAMESPACE, ROCKETMQ_ACCESS_KEY,
                                    ROCKETMQ_SECRET_KEY)
  memory://QUEUE?file=out.jsonl     a queue inside a memory.output file

Messages are read through the transport's ordinary consumer, so the count
shown is the one the rejecting consumer stamped. peek and stats
remove nothing: each message read is held invisible for --visibility while
the scan runs and made visible again when it ends.

RocketMQ keeps a topic's messages for every consumer group, so dlq reads
with a consumer group of its own: --group, by default the subscription's
consumerGroup followed by "-dlq-reader" (or brighter-dlq-reader for a URL),
never the subscription's own group. "Removed" means acknowledged for that
group; each peek is one delivery for it, so give the group a high retry
maximum on a real broker.

SQS FIFO: a message group's later messages are held back by SQS while its
earlier ones are in flight, and a peek holds everything it read, so peek
and stats show at most the first batch (up to 10) of each message group.
replay removes as it goes and reaches every message.

Ctrl-C (SIGINT) or SIGTERM stops a scan: the receive under way finishes
(at most --wait, as the line logged on the signal says: "interrupted;
waiting for the receive in flight ..." up_to=19s), a replay finishes the
publishes and removes it has begun,
every message the scan holds is made visible again at once, what was read
is printed with the summary, and the command exits 130. A second signal
exits 130 at once, leaving held messages invisible until --visibility lapses;
signals within half a second of the first (timeout(1) signals the command and
then its process group) are the same stop.
A signal while a command is still connecting to the broker gives up the
connection at once: exit 130, nothing read or changed. A reader of stdout
that goes away early (| head) stops a command the same way (what it holds
is released), exit 141; archive to a pipe removes a receive only once the
reader has read it and is still reading after it.

On the memory transport the dead letters live in the subscription's
memory.output file (JSON lines, every queue of the run): peek and stats read
the queue named by deadLetterRoutingKey inside it, and replay rewrites the
file, moving the replayed messages to their destination queue.`,
	}
	cmd.AddCommand(peek.NewCmdPeek(f, nil), stats.NewCmdStats(f, nil), replay.NewCmdReplay(f, nil))
	cmd.AddCommand(archive.NewCmdArchive(f, nil), purge.NewCmdPurge(f, nil), restore.NewCmdRestore(f, nil), edit.NewCmdEdit(f, nil), triage.NewCmdTriage(f, nil))
	return cmd
}

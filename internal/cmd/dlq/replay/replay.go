package replay

import (
	"context"

	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/spf13/cobra"
)

// Options are dlq replay's flags: the shared ones, where the copies go
// and what they keep, and the run's own (--copy, --rate, --confirm-over,
// --yes).
type Options struct {
	*shared.ReplayOptions
}

// NewCmdReplay returns dlq replay. runF, when not nil, is called with the
// parsed options instead of runReplay (a test checks the flags' parsing
// without reading anything).
func NewCmdReplay(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{ReplayOptions: &shared.ReplayOptions{Options: shared.NewOptions(f)}}
	cmd := &cobra.Command{
		Use:   "replay [SUBSCRIPTION|URL]",
		Short: "Send dead-lettered messages back where they came from, safely",
		Long: `For each selected message, publish it to --to (default: its originalTopic)
and only then remove it from the dead-letter destination.

Without --to a message goes only to a destination the subscriptions file
knows for the destination being read: the routingKey or channelName of a
subscription whose deadLetterRoutingKey, invalidMessageRoutingKey or
native redrive target it is, as the transport resolves names. The
originalTopic is written by whoever wrote the message, so any other is
refused per message: listed ("refused ID -> DEST"), counted ("refused N")
and left in place; the run exits 1. --allow-any-destination lifts the
allow-list; --dry-run shows each decision ("would refuse ..."). A failed publish
leaves the message where it is and the replay goes on; a crash at any
instant leaves every message in the dead-letter destination, at its
destination, or both, never neither. The summary says how many were
replayed, skipped (not selected) and failed (and refused, and left, when
any); any failure, refusal or message left exits 1.

The replayed message keeps its id (or gets a new one with --new-id), body,
attributes and correlation id, loses the five rejection keys and the
receipt, records replayedFrom and replayedAt, and starts with handled count
0 (unless --keep-count) so its redelivery budget starts afresh. On a FIFO
queue it keeps its message group and gets a fresh deduplication id.

--to takes a topic or queue name, or a URL of the source's transport
(sqs://QUEUE, pubsub://projects/P/topics/T, rocketmq://TOPIC, memory://QUEUE);
it may not be the destination being read (that would only strip the
messages' rejection metadata): that, an empty --to and another transport's
URL are refused before anything is read (exit 2).

A destination that does not exist is never created: those messages fail
and stay. More than --confirm-over messages ask for confirmation on a
terminal and need --yes otherwise (a declined confirmation exits 2, with
nothing replayed); without --yes the replay then handles at most the
number confirmed (or --confirm-over when none was asked).

Each message is handled at most once a run: a replayed message that a
consumer dead-letters again while the replay runs (its copy carries the
run's replayedFrom and replayedAt; or, without them, a new rejection time
after the run began) is left in the dead-letter destination, listed
("left ID: ..."), counted ("left N") and the run exits 1: replay again to
retry it.

--copy publishes each selected message and keeps it in the dead-letter
destination (copy, not move): every message read is held until the scan
ends, as peek holds it, so each is copied once a run. On an SQS FIFO queue
or a RocketMQ message group that reaches only the first batch of each
group, as peek does.

Fan-out (SNS, Pub/Sub, RocketMQ): without --to, a copy for an SNS-fed
subscription goes straight to the failed subscription's queue, not through
its topic to every subscriber; a replay into a Pub/Sub topic (or an SNS
topic whose failed subscription the file does not name) that other
subscriptions also read lists them and is refused (exit 2) unless
--fan-out; a replay into a RocketMQ topic, whose consumer groups cannot be
listed and all receive it, is refused (exit 2) unless --fan-out. A
dead-letter destination shared by several subscriptions of one topic is
refused (exit 2) unless --fan-out or --to: a dead letter does not say
which of them failed it.

Every stored copy counts: two copies of one failure (same id and rejection
time) are both selected; one is published and both are removed. Copies of
one id with different rejection times from before the run (a duplicate
delivery, two subscriptions sharing a dead-letter destination) are
failures of their own: each is published and removed.
--limit N takes the N failures rejected first, so --dry-run picks the same.

Resumable: a replay (move) keeps a journal (--journal, default under
$XDG_STATE_HOME/brighter/replay/) of the copies the broker accepted; each
copy carries a replayId. Run again after a crash, a replay only removes a
message whose copy the journal records as sent, without sending it again.
The journal is deleted when a run ends cleanly (not interrupted, nothing
failed) with no copy recorded sent whose message was not removed; a
journal kept is named on stderr with why. A replay locks its journal
before it reads anything: a second replay on the same journal is refused
at once (exit 2) naming the journal and the holder's pid; a dead
holder's lock is free.

--output json prints one JSON object per selected message as it is
handled ({"type":"message","id":...,"destination":...,"outcome":"replayed",
"would-replay", "refused", "would-refuse", "failed" or "left","error":...;
"newId" with --new-id}) and a last
{"type":"summary","replayed":N,"skipped":N,"failed":N,"refused":N,"left":N,
"dryRun":...,"interrupted":...}; prompts and errors stay on stderr.`,
		Example: `  # See what would happen, then do it
  brighter dlq replay orders --reason DeliveryError --dry-run
  brighter dlq replay orders --reason DeliveryError --yes

  # Try one failure group on a staging queue, keeping the dead letters
  brighter dlq replay orders --group-id 921f815d2f4c --to orders-staging --copy --yes

  # Ten a second, to a staging queue, with new ids
  brighter dlq replay sqs://orders-dlq --to orders-staging --new-id --rate 10 --yes

  # For a script: the ids that failed
  brighter dlq replay orders --yes -o json | jq -r 'select(.outcome == "failed") | .id'`,
		Args: shared.DestinationArgs,
		RunE: o.RunWith(func(cmd *cobra.Command) error {
			o.ToSet = cmd.Flags().Changed("to")
			o.JournalSet = cmd.Flags().Changed("journal")
			if runF != nil {
				return runF(o)
			}
			return runReplay(cmd.Context(), o)
		}),
	}
	o.AddCommon(cmd)
	o.AddDestinationFlags(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&o.Copy, "copy", false, "keep each message in the dead-letter destination: publish a copy, remove nothing (default: move)")
	fl.Float64Var(&o.Rate, "rate", 0, "publish at most this many messages per second (0: no limit)")
	fl.IntVar(&o.ConfirmOver, "confirm-over", 100, "ask before replaying more than this many messages")
	fl.BoolVarP(&o.Yes, "yes", "y", false, "replay without asking, however many messages")
	return cmd
}

// runReplay replays what o selects from o.Dest (shared.ReplayOptions.Run).
func runReplay(ctx context.Context, o *Options) error { return o.Run(ctx, o.Dest) }

package triage

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// dlq triage: the console (internal/tui/triage) over one
// dead-letter destination, its actions wired to inspect's scan, replay and
// archive and to dlq edit's edit session.

// Options are dlq triage's flags: replay's and its own.
type Options struct {
	*shared.ReplayOptions
	// archiveFile is --archive-file: where a (archive) appends.
	archiveFile string
	// logFile is --log-file: where the log goes while the console owns
	// the terminal ("" discards it).
	logFile string
	// refresh is --refresh: how often the console reads the destination
	// again by itself (0: only on ctrl+r and after an action).
	refresh time.Duration
	// refreshSet is whether --refresh was given (refreshPeriod).
	refreshSet bool
	// settle is --settle: how long after its last retry a message not back
	// in the destination counts as a pending retry.
	settle time.Duration
}

// NewCmdTriage returns dlq triage. runF, when not nil, is called with the
// parsed options instead of runTriage (a test checks the flags' parsing
// without opening anything).
func NewCmdTriage(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{ReplayOptions: &shared.ReplayOptions{Options: shared.NewOptions(f)}}
	cmd := &cobra.Command{
		Use:   "triage [SUBSCRIPTION|URL]",
		Short: "An interactive console: failure groups, messages, replay, edit, archive, purge",
		Long: `Open a console over a dead-letter destination: its failure groups (count,
oldest, newest, reason, a sample message), the messages of a group, and
one message (headers, bag, rejection metadata, body pretty-printed by
content type).

Keys: enter opens, esc goes back, space selects (in the group open), r
replays the selection (or what is under the cursor), R replays the whole
group, e edits the message in $EDITOR and replays the edited copy (as dlq
edit), a archives to --archive-file (as dlq archive), x purges (deletes
for good, no copy kept, as dlq purge), d toggles a dry run, / searches
every message (ids, bodies, headers, causes), s sorts, g changes the
grouping (cause, reason, topic, handler), E edits the headers and bag (as
dlq edit --headers), n writes a note on the group, A shows the archive
file, ctrl+r reads again, ? helps, q quits (exit 0); ctrl+c or SIGTERM
interrupts (what an action holds is released, exit 130).

In the archived view (A) r restores the selection (or what is under the
cursor) and R the group into the dead-letter destination, as dlq restore
does: the destination is checked first and the confirmation names the
ids it already holds (y restores those too, another copy each). The
archive file is never changed; a record whose id the dead-letter
destination holds again is marked ↺ (restored).

The console reads the destination again every --refresh (and after every
action; on RocketMQ only on ctrl+r and after an action unless --refresh is
given: every read there is a delivery attempt of the reader group, and after
the group's maximum the broker moves the message to %DLQ%<reader group>), showing "reading…" while it reads and when it last read; the
cursor stays on its group and message. An id stored more than once is
marked ×N. Every copy a replay publishes is recorded in the retry history
beside the replay journals; a message's view lists its retries, and a
retried message not back within --settle of its last retry is settled,
before that pending, and failed again when it comes back.

Replays go where dlq replay sends them (--to, else the originalTopic on
the allow-list; --allow-any-destination lifts it) and keep dlq replay's
journal, the same file: a console killed mid-replay is resumed by the next
replay, here or dlq replay, and no copy is sent twice. Every replay, archive,
purge, restore and edit names its destinations and count and asks once (y/n),
and shows its progress while it runs.

Reads are peek's: the first read holds each message it reads invisible
for --visibility while it runs and makes it visible again as soon as it
ends; every later read releases what each receive brought at once, so a
refreshing console never keeps the dead letters from another consumer.
Every action reads afresh, so nothing is held between keys or after q.`,
		Example: `  brighter dlq triage orders
  brighter dlq triage sqs://orders-dlq --to orders --archive-file orders-dlq.jsonl
  brighter dlq triage orders --dry-run        # start with the dry run on`,
		Args: shared.DestinationArgs,
		RunE: o.RunWith(func(cmd *cobra.Command) error {
			o.ToSet = cmd.Flags().Changed("to")
			o.refreshSet = cmd.Flags().Changed("refresh")
			if runF != nil {
				return runF(o)
			}
			return runTriage(cmd.Context(), o)
		}),
	}
	o.AddCommon(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.To, "to", "", "replay every message to this topic or queue, or a URL of the source's transport (default: its originalTopic)")
	fl.BoolVar(&o.DryRun, "dry-run", false, "start with the dry run on (d toggles it)")
	fl.BoolVar(&o.AllowAny, "allow-any-destination", false, "without --to, replay to any originalTopic a message names, not only the routingKey or channelName of a subscription the file says dead-letters here")
	fl.BoolVar(&o.SNS, "sns", false, "for an sqs:// URL only: publish replays to SNS topics instead of SQS queues")
	fl.BoolVar(&o.FanOut, "fan-out", false, "without --to, replay to a topic that other subscriptions or consumer groups also receive (SNS, Pub/Sub, RocketMQ); by default the console refuses to open on such a destination, or on SNS replays to the failed subscription's queue only")
	fl.StringVar(&o.archiveFile, "archive-file", "dlq-archive.jsonl", "the file the console's a key archives to (JSON lines, appended, as dlq archive writes)")
	fl.StringVar(&o.logFile, "log-file", "", "write the log to this file while the console runs (default: none)")
	fl.DurationVar(&o.settle, "settle", triage.DefaultSettle, "a retried message not back in the destination is a pending retry for this long after its last retry, then settled")
	fl.DurationVar(&o.refresh, "refresh", defaultRefresh, "read the destination again this often while the console is open (0: only on ctrl+r and after an action; on RocketMQ 0 unless given, since every read spends a delivery attempt of the reader group)")
	return cmd
}

// defaultRefresh is --refresh's default: how often the console reads the
// destination again by itself.
const defaultRefresh = 5 * time.Second

// refreshPeriod is how often the console reads t again by itself: --refresh
// (refresh) as given, or by default defaultRefresh, except on RocketMQ (a
// reader group, t.Group), where every read is a delivery attempt of the
// reader group: refreshing every few seconds would spend a message's
// attempts (16 by default) in about a minute and a half, and the broker
// would then move it on to %DLQ%<reader group>, out of the console's
// sight. There the console reads again only on ctrl+r and after an action
// unless --refresh is given (set).
func refreshPeriod(t *transport.Target, refresh time.Duration, set bool) time.Duration {
	if t != nil && t.Group != "" && !set {
		return 0
	}
	return refresh
}

package dlq_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// connectStopBound is how soon a dlq command still connecting to a broker
// that never answers must exit after its signal: well under the SQS call
// deadline (15s) and the Pub/Sub topic lookup (5s) it would otherwise
// wait for.
const connectStopBound = 3 * time.Second

// TestDLQ_SignalWhileConnecting_Exits130 starts `brighter dlq peek` of an
// SQS queue, `brighter dlq replay --yes --to` of a Pub/Sub subscription
// (which first asks the broker where the subscription's topic is),
// `brighter dlq restore --to` into one (whose producer connects before
// anything is published), `brighter dlq restore` without --to (which first
// asks the broker whether the dead-letter topic fans out to other
// subscriptions) and `brighter dlq triage` of one (whose replay
// target is looked up before the console opens) on an
// endpoint that accepts connections and never answers, and signals each
// while it connects: SIGTERM gives up
// the connection at once, exit 130 with a final line saying it was
// interrupted while connecting; SIGINT twice exits 130 at once (the second
// does not wait for the first's end). Each within connectStopBound.
func TestDLQ_SignalWhileConnecting_Exits130(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		name string
		args []string
	}{
		{"peek", []string{"peek", "sqs://orders-dlq", "--endpoint", "URL", "--region", "us-east-1"}},
		{"replay", []string{"replay", "pubsub://projects/p/subscriptions/orders-dlq", "--yes", "--to", "orders", "--journal", "JOURNAL", "--endpoint", "ADDR"}},
		{"restore", []string{"restore", "ARCHIVE", "-s", "pubsub://projects/p/subscriptions/orders-dlq", "--to", "orders", "--endpoint", "ADDR"}},
		// Without --to, restore first asks which subscriptions the
		// dead-letter topic fans out to.
		{"restore-without-to", []string{"restore", "ARCHIVE", "-s", "pubsub://projects/p/subscriptions/orders-dlq", "--endpoint", "ADDR"}},
		// The console logs to --log-file only: stderr is its terminal.
		{"triage", []string{"triage", "pubsub://projects/p/subscriptions/orders-dlq", "--to", "orders", "--endpoint", "ADDR", "--log-file", "LOG"}},
	} {
		verb := v.args
		// The destination the final line names: the verb's URL.
		url := verb[slices.IndexFunc(verb, func(a string) bool { return strings.Contains(a, "://") })]
		for _, tc := range []struct {
			name string
			sigs []os.Signal
			// line is whether the final line must be there: a second
			// signal may exit before the first's end prints it.
			line bool
		}{
			{"SIGTERM", []os.Signal{syscall.SIGTERM}, true},
			{"double SIGINT", []os.Signal{syscall.SIGINT, syscall.SIGINT}, false},
		} {
			t.Run(v.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				b := cmdtest.NewSilentBroker(t)
				dir := t.TempDir()
				args := append([]string{"dlq"}, verb...)
				logFile := "" // where the command logs, when not on stderr
				for i, a := range args {
					switch a {
					case "URL":
						args[i] = b.URL
					case "ADDR":
						args[i] = b.Addr
					case "JOURNAL": // a journal of this run's own: parallel replays do not share one
						args[i] = filepath.Join(t.TempDir(), "replay.journal")
					case "LOG":
						logFile = filepath.Join(dir, "dlq.log")
						args[i] = logFile
					case "ARCHIVE": // an archive of one record, for restore to publish
						args[i] = filepath.Join(dir, "archive.jsonl")
						if err := os.WriteFile(args[i], []byte(`{"id":"a1","topic":"orders","body":"{}"}`+"\n"), 0o600); err != nil {
							t.Fatal(err)
						}
					}
				}
				r := cmdtest.SignalWhileConnecting(t, dir, b, 0, tc.sigs, args...)
				if r.Code != 130 {
					t.Fatalf("exit %d, want 130 (interrupted); stderr:\n%s", r.Code, r.Stderr)
				}
				if r.Took > connectStopBound {
					t.Errorf("exited %v after the signal, want within %v (not at the broker's call deadline)", r.Took, connectStopBound)
				}
				logs := r.Stderr
				if logFile != "" {
					b, err := os.ReadFile(logFile)
					if err != nil {
						t.Fatal(err)
					}
					logs = string(b)
				}
				if !strings.Contains(logs, "signal received while connecting to the broker") {
					t.Errorf("no log of the signal while connecting; log:\n%s", logs)
				}
				if tc.line && !strings.Contains(r.Stderr, "brighter: "+url+": interrupted while connecting to the broker; nothing was read or changed") {
					t.Errorf("no final line saying the run was interrupted while connecting; stderr:\n%s", r.Stderr)
				}
			})
		}
	}
}

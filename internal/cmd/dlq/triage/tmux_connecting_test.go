package triage

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// connectStopBound is how soon the console still connecting to a broker
// that never answers must exit after q or ctrl+c: well under the SQS call
// deadline (15s) it would otherwise wait for.
const connectStopBound = 5 * time.Second

// TestDLQTriage_TmuxConnecting opens the console on an SQS dead-letter
// queue whose endpoint accepts connections and never answers, in a real
// terminal: from the first frame the console says which destination it
// reads, on which transport and endpoint, and for how long (the count
// moves), not a blank screen; q then quits (exit 0, no error line) and
// ctrl+c or SIGTERM interrupts (exit 130, saying it was interrupted while
// connecting), each at once rather than after the call deadline.
func TestDLQTriage_TmuxConnecting(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	for i, c := range []struct {
		name, key string
		literal   bool
		code      string
	}{
		{"q", "q", true, "0"},
		{"ctrl-c", "C-c", false, "130"},
		{"SIGTERM", "", false, "130"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := cmdtest.NewSilentBroker(t)
			run := fmt.Sprintf("tc%d-%d", i, time.Now().UnixNano()%1e9)
			s := cmdtest.StartBrighterInTmux(t, run, "dlq triage sqs://orders-dlq --region us-east-1 --endpoint "+b.URL,
				[]string{"NO_COLOR=1", "XDG_STATE_HOME=" + filepath.Join(t.TempDir(), "state"),
					"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test"})
			s.Await("what it connects to", func(sc string) bool {
				return strings.Contains(sc, "connecting to the broker for ") && strings.Contains(sc, "reading sqs://orders-dlq...") &&
					strings.Contains(sc, "sqs at "+b.URL) && strings.Contains(sc, "q quit (exit 0)")
			})
			count := regexp.MustCompile(`connecting to the broker for ([0-9]+)s`)
			s.Await("the count moving", func(sc string) bool {
				m := count.FindStringSubmatch(sc)
				return m != nil && m[1] != "0"
			})
			at := time.Now()
			if c.key == "" {
				s.Signal(syscall.SIGTERM)
			} else {
				s.Keys(c.literal, c.key)
			}
			got, stderr := s.AwaitExitCode(), s.Stderr()
			if took := time.Since(at); took > connectStopBound {
				t.Errorf("triage took %s to exit after %s while connecting, want under %s", took, c.name, connectStopBound)
			}
			if got != c.code {
				t.Fatalf("triage ended by %s while connecting exited %s, want %s; stderr:\n%s", c.name, got, c.code, stderr)
			}
			if c.code == "130" && !strings.Contains(stderr, "brighter: triage sqs://orders-dlq: interrupted while connecting to the broker; nothing was read or changed") {
				t.Errorf("no final line saying triage was interrupted while connecting; stderr:\n%s", stderr)
			}
			if c.code == "0" && strings.Contains(stderr, "brighter:") {
				t.Errorf("a quit with q ends with an error line; stderr:\n%s", stderr)
			}
		})
	}
}

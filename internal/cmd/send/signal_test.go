package send_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/polltest"
)

// TestSend_SignalStopsTheSendSayingHowManyWereSent starts `brighter send
// --count 100000` as a process on an SQS queue of fauxqs and signals it
// (SIGINT, SIGTERM) once some messages are out: it sends no more, logs the
// summary line of a finished send marked interrupted with the count sent
// (each of them printed on stdout), ends with a `brighter: ...` line
// saying it was interrupted after N of 100000, and exits 130, soon.
func TestSend_SignalStopsTheSendSayingHowManyWereSent(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			queue := fmt.Sprintf("send-sig-%d", time.Now().UnixNano())
			yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: src\n    transport: sqs\n    channelName: %s\n    handler: {type: builtin, name: ack}\n", sqstest.Region, emu.Endpoint, queue)
			if err := os.WriteFile(filepath.Join(dir, "brighter.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			p := cmdtest.StartBrighter(t, dir, nil, "send", "-s", "src", "--count", "100000", "--body", "{}")
			// Three ids printed: three messages sent, the send under way.
			polltest.UntilMsg(t, 30*time.Second, func() string { return "3 messages sent; stderr:\n" + p.Stderr.String() }, func() bool {
				return strings.Count(p.Stdout.String(), "\n") >= 3
			})
			p.Signal(sig)
			code, took := p.Wait(t)
			stderr := p.Stderr.String()
			if code != 130 {
				t.Fatalf("exit %d, want 130; stderr:\n%s", code, stderr)
			}
			if took > 5*time.Second {
				t.Errorf("exited %v after the signal, want at once", took)
			}
			printed := strings.Count(p.Stdout.String(), "\n")
			m := regexp.MustCompile(`msg="messages sent" count=(\d+) .*interrupted=true`).FindStringSubmatch(stderr)
			if m == nil {
				t.Fatalf("no summary line marked interrupted; stderr:\n%s", stderr)
			}
			if n, _ := strconv.Atoi(m[1]); n != printed {
				t.Errorf("summary says %d sent, stdout has %d ids", n, printed)
			}
			if want := fmt.Sprintf("brighter: send to %s: interrupted; %s of 100000 sent", queue, m[1]); !strings.Contains(stderr, want) {
				t.Errorf("no final line %q; stderr:\n%s", want, stderr)
			}
			if !strings.Contains(stderr, "signal received; stopping the send") {
				t.Errorf("the signal is not logged; stderr:\n%s", stderr)
			}
		})
	}
}

// TestSend_SignalWhileLookingUpTheDestination_SaysNothingWasSent starts
// `brighter send` of an SQS subscription and of an SNS one (channelType
// pubSub) on an endpoint that accepts connections and never answers, so
// the send waits on the look-up of its queue (GetQueueUrl) or topic, before
// any publish call, and signals it there: exit 130, soon, with a final line
// saying none of the one was sent and that nothing was, not that the
// broker may have taken a message that was never handed to it.
func TestSend_SignalWhileLookingUpTheDestination_SaysNothingWasSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, sqs string }{
		{"sqs", ""},
		{"sns", "    sqs: {channelType: pubSub}\n"},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(tc.name+"/"+sig.String(), func(t *testing.T) {
				t.Parallel()
				b := cmdtest.NewSilentBroker(t)
				dir := t.TempDir()
				yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: src\n    transport: sqs\n    channelName: orders\n    handler: {type: builtin, name: ack}\n%s", sqstest.Region, b.URL, tc.sqs)
				if err := os.WriteFile(filepath.Join(dir, "brighter.yaml"), []byte(yaml), 0o644); err != nil {
					t.Fatal(err)
				}
				r := cmdtest.SignalWhileConnecting(t, dir, b, 0, []os.Signal{sig}, "send", "-s", "src", "--body", "{}")
				if r.Code != 130 {
					t.Fatalf("exit %d, want 130; stderr:\n%s", r.Code, r.Stderr)
				}
				if r.Took > 5*time.Second {
					t.Errorf("exited %v after the signal, want at once (not at the SQS call deadline)", r.Took)
				}
				if want := "brighter: send to orders: interrupted; 0 of 1 sent (before the first publish call: nothing was sent)"; !strings.Contains(r.Stderr, want) {
					t.Errorf("no final line %q; stderr:\n%s", want, r.Stderr)
				}
				if strings.Contains(r.Stderr, "may have taken") {
					t.Errorf("the final line says the broker may have taken a message never handed to it; stderr:\n%s", r.Stderr)
				}
			})
		}
	}
}

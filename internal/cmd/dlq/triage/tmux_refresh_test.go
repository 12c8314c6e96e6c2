package triage

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/message"
)

// startTriageAt is startTriage in a w x h window.
func startTriageAt(t *testing.T, run, command string, env []string, w, h int) tmuxSession {
	t.Helper()
	return tmuxSession{cmdtest.StartTmuxAt(t, run, command, env, w, h)}
}

// fitsWidth fails the test when a line of the screen sc is wider than w
// cells.
func fitsWidth(t *testing.T, sc string, w int) {
	t.Helper()
	for _, l := range strings.Split(sc, "\n") {
		if n := len([]rune(l)); n > w {
			t.Errorf("a line of %d cells on a %d-column terminal: %q", n, w, l)
		}
	}
}

// searchesBodyAndID drives the console from its groups screen, over the
// dead letters o3000-RUN... the test seeded: / finds a message by the order
// number in its body (3007, not 3004), and, after esc back to the groups,
// by its id (o3010-RUN); esc leaves each search for the groups.
func (s tmuxSession) searchesBodyAndID(run string) {
	// search from the groups screen: by the order number in a body
	s.Keys(true, "/3007")
	s.Keys(false, "Enter")
	s.Await("the search's result", func(sc string) bool {
		return strings.Contains(sc, "search /3007") && strings.Contains(sc, "o3007-"+run) && !strings.Contains(sc, "o3004-"+run)
	})
	// and by an id, after esc back to the groups
	s.Keys(false, "Escape")
	s.Await("back at the groups", func(sc string) bool { return !strings.Contains(sc, "search /3007") })
	s.Keys(true, "/o3010-"+run)
	s.Keys(false, "Enter")
	s.Await("the search by id", func(sc string) bool {
		return strings.Contains(sc, "1 message matching") && strings.Contains(sc, "o3010-"+run)
	})
	s.Keys(false, "Escape")
	s.Await("back at the groups", func(sc string) bool { return !strings.Contains(sc, "search /o3010") })
}

// budgetSpent is a dead letter whose budget ran out in the handler of
// topic: the long shared prefix, then the handler's last error.
func budgetSpent(id, topic, dlq, last string, order int, at time.Time) *message.Message {
	m := message.New(id, topic, message.MTCommand, []byte(fmt.Sprintf(`{"orderId":%d}`, order)))
	why := "redelivery budget exhausted: delivery count 5 reached requeueCount 5 (delivered 5 times, handled 5 times in this process); last error: " + last
	return message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: why}, at)
}

// TestDLQTriage_TmuxSearchAndRefresh: the console in a real terminal
// (tmux, NO_COLOR) on fauxqs, at 80x24 and at 200x60, over dead letters
// of three handlers whose causes share the budget's long prefix: each
// group shows its topic and its last error (the prefix folded); / on the
// groups screen finds a message by the order number in its body and by
// its id, from any group; and with --refresh 1s, messages dead-lettered
// while the console is open appear without a key press.
func TestDLQTriage_TmuxSearchAndRefresh(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	f := newTriageSQS(t)
	emu := f.emu
	for _, size := range []struct{ w, h int }{{80, 24}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			run := fmt.Sprintf("sr%d", time.Now().UnixNano()%1e9)
			dlq, dest := "triage-dlq-"+run, "triage-dest-"+run
			f.queues(t, dlq, dest)
			now := time.Now()
			handlers := []struct{ topic, last string }{
				{"payments", "card declined by the acquirer"},
				{"shipping", "carrier API returned 503"},
				{"stock", "row locked by another order"},
			}
			for i := range 12 {
				h := handlers[i%3]
				f.send(t, budgetSpent(fmt.Sprintf("o%d-%s", 3000+i, run), h.topic, dlq, h.last, 3000+i, now.Add(-time.Duration(i)*time.Minute)))
			}
			exitFile := filepath.Join(t.TempDir(), "exit")
			command := fmt.Sprintf("%s dlq triage sqs://%s --to %s --refresh 1s --visibility 30s --endpoint %s --region %s; echo $? > %s",
				cmdtest.Bin(t), dlq, dest, emu.Endpoint, sqstest.Region, exitFile)
			s := startTriageAt(t, run, command, []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1"}, size.w, size.h)

			sc := s.Await("the three groups, told apart", func(sc string) bool {
				for _, h := range handlers {
					if !strings.Contains(sc, h.topic) || !strings.Contains(sc, "…"+h.last[:10]) {
						return false
					}
				}
				return true
			})
			fitsWidth(t, sc, size.w)

			s.searchesBodyAndID(run)

			// dead-lettered while the console is open: shown by the next
			// refresh, no key pressed
			for i := range 2 {
				m := message.New(fmt.Sprintf("late%d-%s", i, run), "billing", message.MTCommand, []byte(`{}`))
				f.send(t, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "ledger closed for the day"}, time.Now()))
			}
			s.Await("the late dead letters, without a key press", func(sc string) bool {
				return strings.Contains(sc, "ledger closed for the day") && strings.Contains(sc, "billing")
			})
			s.Keys(true, "q")
			s.AwaitExit(exitFile)
		})
	}
}

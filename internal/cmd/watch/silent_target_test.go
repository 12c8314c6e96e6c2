package watch_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// TestWatch_TargetThatNeverAnswersIsShownUnreachable starts `brighter
// watch -t` in a terminal (tmux) on a target that accepts connections and
// never answers: within a few seconds the dashboard says the target is
// unreachable and why (no answer), instead of "waiting for events" for
// ever, and it keeps retrying (the attempt count grows).
func TestWatch_TargetThatNeverAnswersIsShownUnreachable(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not installed (%v): this test drives the dashboard in a real terminal; install it (make deps installs tmux)", err)
	}
	b := cmdtest.NewSilentBroker(t)
	run := fmt.Sprintf("watch-silent-%d", time.Now().UnixNano())
	s := cmdtest.StartTmux(t, run, cmdtest.Bin(t)+" watch -t "+b.URL, []string{"NO_COLOR=1"})
	start := time.Now()
	s.Await("the target shown unreachable with its reason", func(sc string) bool {
		return strings.Contains(sc, "unreachable") && strings.Contains(sc, "no answer within")
	})
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the target was shown unreachable after %v, want within a few seconds", took)
	}
	s.Await("a retry after the first attempt", func(sc string) bool {
		return strings.Contains(sc, "attempt 2") || strings.Contains(sc, "attempt 3")
	})
}

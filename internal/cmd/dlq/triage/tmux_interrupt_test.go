package triage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// replayProgress matches the console's progress line of a replay of n
// messages: how many are done so far.
func replayProgress(n int) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`replay: (\d+) of %d done`, n))
}

// startReplayInTmux opens the console in tmux with args (dlq triage's:
// a dead-letter destination of n routed copies, dlqtest.CrashQueue or
// dlqtest.CrashBrokers, and where to replay them), starts R (the whole
// group) and y, and returns once the progress line shows a replay under
// way (some done, not all).
func startReplayInTmux(t *testing.T, run, args string, n int) cmdtest.TmuxBrighter {
	t.Helper()
	s := cmdtest.StartBrighterInTmux(t, run, "dlq triage "+args,
		[]string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1", "HOME=" + cmdtest.HomeDir(), "XDG_STATE_HOME=" + cmdtest.StateDir()})
	s.AwaitText(fmt.Sprintf("%d ", n))
	s.Keys(true, "R")
	s.AwaitText(fmt.Sprintf("Replay %d messages", n))
	s.Keys(true, "y")
	progress := replayProgress(n)
	deadline := time.Now().Add(time.Minute)
	for {
		sc := strings.Join(strings.Fields(s.Screen()), " ")
		if m := progress.FindStringSubmatch(sc); m != nil {
			if done, _ := strconv.Atoi(m[1]); done > 0 && done < n {
				return s
			}
		}
		if strings.Contains(sc, fmt.Sprintf("replayed %d", n)) {
			t.Fatalf("the replay of %d messages ended before the test saw it under way:\n%s", n, sc)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no replay under way after a minute; the screen:\n%s", s.Screen())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDLQTriage_TmuxSignalStopsARunningReplay: SIGINT (and, in another
// run, SIGTERM) while the console replays a thousand messages on fauxqs
// stops the replay: signalStopsReplay.
func TestDLQTriage_TmuxSignalStopsARunningReplay(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			const n = 1000
			dlq, dest, conn := dlqtest.CrashQueue(t, n)
			logFile := filepath.Join(t.TempDir(), "triage.log")
			run := fmt.Sprintf("ti%d-%d", i, time.Now().UnixNano()%1e9)
			signalStopsReplay(t, run, fmt.Sprintf("sqs://%s --to %s --visibility 5m --log-file %s %s", dlq, dest, logFile, strings.Join(conn, " ")), n, sig, logFile,
				func() map[string]int { return dlqtest.CrashDestIDs(t, dlq, conn) }, func() map[string]int { return dlqtest.CrashDestIDs(t, dest, conn) })
		})
	}
}

// TestDLQTriage_TmuxSignalStopsARunningReplay_PubSub: SIGINT while the
// console replays a thousand messages on Google's Pub/Sub emulator stops
// the replay: signalStopsReplay.
func TestDLQTriage_TmuxSignalStopsARunningReplay_PubSub(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	const n = 1000
	for _, b := range dlqtest.CrashBrokers(t, n) {
		if b.Name != "gcp" {
			continue
		}
		logFile := filepath.Join(t.TempDir(), "triage.log")
		read := func(args ...string) map[string]int {
			out, err := dlqtest.CrashCmd(t, args...).Output()
			if err != nil {
				t.Fatalf("%v: %v", args[:3], err)
			}
			return dlqtest.CrashIDs(t, out)
		}
		signalStopsReplay(t, fmt.Sprintf("tg%d", time.Now().UnixNano()%1e9), fmt.Sprintf("orders -c %s --to %s --visibility 5m --log-file %s", b.File, b.Dest, logFile), n, syscall.SIGINT, logFile,
			func() map[string]int {
				return read("dlq", "peek", "orders", "-c", b.File, "-o", "json", "--wait", "1s")
			}, func() map[string]int { return read(b.PeekDest...) })
	}
}

// signalStopsReplay opens the console in tmux with args on a dead-letter
// destination of n routed copies, c0 ... c<n-1>, replays them all (R, y)
// and sends sig while the replay runs: the console exits within a few
// seconds with 130, every message not replayed is visible again at once
// (one read of the dead-letter destination, inDLQ, and one of the
// destination, atDest, right after the exit find each message in one of
// them, none held for the console's five-minute --visibility, none in
// both), and the audit record of the replay is in logFile (--log-file).
func signalStopsReplay(t *testing.T, run, args string, n int, sig syscall.Signal, logFile string, inDLQ, atDest func() map[string]int) {
	t.Helper()
	s := startReplayInTmux(t, run, args, n)
	s.Signal(sig)
	signalled := time.Now()
	code := s.AwaitExitCode()
	took := time.Since(signalled)
	if code != "130" {
		t.Fatalf("the console interrupted by %s during a replay exited %s, want 130; stderr:\n%s", sig, code, s.Stderr())
	}
	if took > 10*time.Second {
		t.Errorf("the console took %s to exit after %s during a replay", took.Round(time.Millisecond), sig)
	}
	delivered := atDest()
	left := inDLQ()
	var nowhere, both []string
	for k := range n {
		id := fmt.Sprintf("c%d", k)
		switch {
		case delivered[id] == 0 && left[id] == 0:
			nowhere = append(nowhere, id)
		case delivered[id] > 0 && left[id] > 0:
			both = append(both, id)
		}
	}
	t.Logf("%s after %s: %d replayed, %d left in the dead-letter queue", sig, took.Round(time.Millisecond), len(delivered), len(left))
	if len(nowhere) > 0 {
		t.Errorf("%d messages are neither visible in the dead-letter queue nor at the destination right after the exit (held for --visibility?): %v", len(nowhere), nowhere[:min(len(nowhere), 10)])
	}
	if len(both) > 0 {
		t.Errorf("%d messages are both at the destination and in the dead-letter queue: %v", len(both), both[:min(len(both), 10)])
	}
	if len(left) == 0 {
		t.Errorf("the whole dead-letter queue was replayed: the signal did not stop the replay")
	}
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged), `msg="`+LogAudit+`"`) || !strings.Contains(string(logged), "action=replay") {
		t.Errorf("no audit record of the interrupted replay in --log-file:\n%s", dlqtest.LastLines(string(logged), 10))
	}
}

// TestDLQTriage_TmuxKilledReplayResumedByDLQReplay: a console replay
// killed (SIGKILL) once its replay journal records copies sent is resumed
// by dlq replay, which finds the same journal (the default one of the
// dead-letter queue's URL in the state directory): the dead-letter queue
// ends empty, every message is at the destination, and a message is there
// twice only when its copy was in flight (recorded "sending", not "sent")
// at the kill. On fauxqs.
func TestDLQTriage_TmuxKilledReplayResumedByDLQReplay(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	t.Parallel()
	const n = 1000
	dlq, dest, conn := dlqtest.CrashQueue(t, n)
	run := fmt.Sprintf("tk%d", time.Now().UnixNano()%1e9)
	s := startReplayInTmux(t, run, fmt.Sprintf("sqs://%s --to %s --visibility 2s %s", dlq, dest, strings.Join(conn, " ")), n)
	var journal string
	deadline := time.Now().Add(30 * time.Second)
	for journal == "" {
		paths, _ := filepath.Glob(filepath.Join(cmdtest.StateDir(), "brighter", "replay", "*"+dlq+"-*.journal"))
		for _, p := range paths {
			if data, _ := os.ReadFile(p); bytes.Contains(data, []byte("sent ")) {
				journal = p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no replay journal recording a copy sent in %s 30 s into the console's replay (%v); the screen:\n%s", cmdtest.StateDir(), paths, s.Screen())
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Signal(syscall.SIGKILL)
	if code := s.AwaitExitCode(); code != "137" {
		t.Logf("the killed console exited %s", code)
	}
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatalf("the killed console's journal: %v", err)
	}
	state := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if kind, rid, ok := strings.Cut(line, " "); ok {
			rid, _, _ = strings.Cut(rid, " ")
			if kind == "sending" && state[rid] != "" {
				continue
			}
			state[rid] = kind
		}
	}
	inFlight, sentNotRemoved := map[string]bool{}, 0
	for rid, kind := range state {
		switch kind {
		case "sending":
			inFlight[rid] = true
		case "sent":
			sentNotRemoved++
		}
	}
	delivered := dlqtest.CrashDestIDs(t, dest, conn)
	t.Logf("after the kill: %d copies at the destination; the journal: %d in flight, %d sent and not removed", len(delivered), len(inFlight), sentNotRemoved)
	// The killed console held what it read for 2s: wait until each message
	// is back or delivered, then resume with dlq replay (its journal).
	dlqtest.CrashPeekIDs(t, dlq, conn, n, delivered)
	out, err := dlqtest.CrashCmd(t, append([]string{"dlq", "replay", "sqs://" + dlq, "--yes", "--to", dest, "--visibility", "2s", "--wait", "1s"}, conn...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dlq replay after the killed console: %v\n%s", err, out)
	}
	t.Logf("dlq replay:\n%s", dlqtest.LastLines(string(out), 4))
	if sentNotRemoved > 0 && !strings.Contains(string(out), "resuming: the journal "+journal) {
		t.Errorf("dlq replay does not resume the console's journal %s (%d copies sent and not removed):\n%s", journal, sentNotRemoved, dlqtest.LastLines(string(out), 6))
	}
	dups := dlqtest.CrashDuplicatesInFlight(t, dlqtest.CrashDestCopies(t, dest, conn), n, inFlight, "the kill")
	t.Logf("%d of %d delivered twice, each in flight at the kill", dups, n)
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 0 {
		t.Errorf("the dead-letter queue still holds %d messages after dlq replay", len(left))
	}
}

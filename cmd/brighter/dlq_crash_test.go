package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// crashQueue makes an SQS queue on fauxqs holding n routed copies (c0 ..
// c<n-1>) and a destination queue; it returns their names and the flags
// that reach them.
func crashQueue(t *testing.T, n int) (dlq, dest string, conn []string) {
	t.Helper()
	emu := sharedSQS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	dlq = fmt.Sprintf("crash-dlq-%d", time.Now().UnixNano()%1e9)
	dest = dlq + "-dest"
	for _, q := range []string{dlq, dest} {
		if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q}).EnsureChannels(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	var batch []*message.Message
	for i := range n {
		m := message.New(fmt.Sprintf("c%d", i), dest, message.MTCommand, []byte(`{}`))
		batch = append(batch, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, time.Now()))
		if len(batch) == 10 || i == n-1 {
			for _, err := range p.SendBatch(context.Background(), batch) {
				if err != nil {
					t.Fatal(err)
				}
			}
			batch = batch[:0]
		}
	}
	return dlq, dest, []string{"--endpoint", emu.Endpoint, "--region", sqstest.Region}
}

// crashIDs reads the message ids of JSON lines (an archive, peek -o json).
func crashIDs(t *testing.T, data []byte) map[string]int {
	t.Helper()
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			// A SIGKILL can cut the last line of an archive short: that
			// message was never synced, so never removed.
			continue
		}
		out[r.ID]++
	}
	return out
}

// sigkillAfter starts `brighter ARGS`, SIGKILLs it after d, and waits for it.
func sigkillAfter(t *testing.T, d time.Duration, args ...string) {
	t.Helper()
	cmd := exec.Command(crashBin(t), args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { _ = cmd.Process.Kill() })
	_ = cmd.Wait()
	timer.Stop()
	t.Logf("%v after %s; stderr: %s", args[:2], d, errOut.String())
}

// crashPeekIDs waits (with a deadline) until the messages a killed run held are
// visible again and every id of want is in the queue or in also; it fails
// naming the ids that are nowhere.
func crashPeekIDs(t *testing.T, queue string, conn []string, n int, also map[string]int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		out, err := exec.Command(crashBin(t), append([]string{"dlq", "peek", "sqs://" + queue, "-o", "json", "--wait", "1s"}, conn...)...).Output()
		if err != nil {
			t.Fatalf("peek: %v", err)
		}
		got := crashIDs(t, out)
		var missing []string
		for i := range n {
			id := fmt.Sprintf("c%d", i)
			if got[id] == 0 && also[id] == 0 {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages are nowhere (neither in %s nor elsewhere): %v", len(missing), queue, missing)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// crashBin is the `brighter` command: this test binary, on the PATH that
// testscript.Main set up.
func crashBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("brighter")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestDLQ_ArchiveSIGKILL_NeverNowhere_Issue30: dlq archive killed with
// SIGKILL at random instants, three times in a row appending to one file:
// every message is in the DLQ or in the archive (or both), never nowhere;
// a last, unkilled archive empties the DLQ into the file.
func TestDLQ_ArchiveSIGKILL_NeverNowhere_Issue30(t *testing.T) {
	const n = 1000
	dlq, _, conn := crashQueue(t, n)
	file := filepath.Join(t.TempDir(), "archive.jsonl")
	args := append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", file, "--visibility", "2s", "--wait", "1s"}, conn...)
	for range 3 {
		sigkillAfter(t, time.Duration(20+rand.IntN(600))*time.Millisecond, args...)
		data, _ := os.ReadFile(file)
		archived := crashIDs(t, data)
		t.Logf("%d of %d in the archive after the kill", len(archived), n)
		crashPeekIDs(t, dlq, conn, n, archived)
	}
	if out, err := exec.Command(crashBin(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("the last archive: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(file)
	got := crashIDs(t, data)
	for i := range n {
		if got[fmt.Sprintf("c%d", i)] == 0 {
			t.Errorf("c%d is not in the archive", i)
		}
	}
	if left := crashPeekIDs(t, dlq, conn, n, got); len(left) != 0 {
		t.Fatalf("the DLQ still holds %v after a complete archive", left)
	}
}

// TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter_Issue30: dlq replay --copy
// killed with SIGKILL at random instants never removes a dead letter:
// every message is still in the DLQ once the killed run's hold lapses.
func TestDLQ_ReplayCopySIGKILL_KeepsEveryDeadLetter_Issue30(t *testing.T) {
	const n = 1000
	dlq, dest, conn := crashQueue(t, n)
	args := append([]string{"dlq", "replay", "sqs://" + dlq, "--copy", "--yes", "--to", dest, "--visibility", "2s", "--wait", "1s"}, conn...)
	for range 3 {
		sigkillAfter(t, time.Duration(20+rand.IntN(600))*time.Millisecond, args...)
		crashPeekIDs(t, dlq, conn, n, nil)
	}
}

// TestDLQ_ReplaySIGKILL_ResumesExactlyOnce_Issue30: dlq replay (move)
// killed with SIGKILL at random instants, three times, then run to the end
// with the same journal: the dead-letter queue ends empty, every message is
// at the destination, and a message is there twice only when its copy was
// in flight (recorded "sending", not "sent") at one of the kills: what a
// killed run had finished is neither lost nor sent again.
func TestDLQ_ReplaySIGKILL_ResumesExactlyOnce_Issue30(t *testing.T) {
	const n = 1000
	dlq, dest, conn := crashQueue(t, n)
	journal := filepath.Join(t.TempDir(), "replay.journal")
	// --rate spreads the run over about 2.5s, so each kill lands mid-run.
	args := append([]string{"dlq", "replay", "sqs://" + dlq, "--yes", "--to", dest, "--journal", journal, "--rate", "400", "--visibility", "2s", "--wait", "1s"}, conn...)
	inFlight := map[string]bool{} // replay ids in flight at a kill
	for range 3 {
		sigkillAfter(t, time.Duration(100+rand.IntN(700))*time.Millisecond, args...)
		data, _ := os.ReadFile(journal)
		state := map[string]string{}
		for _, line := range strings.Split(string(data), "\n") {
			if kind, rid, ok := strings.Cut(line, " "); ok {
				if kind == "sending" && state[rid] != "" {
					continue
				}
				state[rid] = kind
			}
		}
		for rid, kind := range state {
			if kind == "sending" {
				inFlight[rid] = true
			}
		}
		delivered := crashDestIDs(t, dest, conn)
		t.Logf("after the kill: %d copies at the destination, %d in flight so far", len(delivered), len(inFlight))
		crashPeekIDs(t, dlq, conn, n, delivered)
	}
	out, err := exec.Command(crashBin(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("the last replay: %v\n%s", err, out)
	}
	t.Logf("the last replay:\n%s", lastLines(string(out), 3))
	if _, err := os.Stat(journal); !os.IsNotExist(err) {
		t.Errorf("the journal %s was kept after a complete replay (stat: %v)", journal, err)
	}
	got := map[string][]string{} // id -> replay ids of its copies
	raw, err := exec.Command(crashBin(t), append([]string{"dlq", "peek", "sqs://" + dest, "-o", "json", "--wait", "1s"}, conn...)...).Output()
	if err != nil {
		t.Fatalf("peek the destination: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			ID  string         `json:"id"`
			Bag map[string]any `json:"bag"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("peek line %q: %v", sc.Text(), err)
		}
		rid, _ := r.Bag[inspect.KeyReplayID].(string)
		got[r.ID] = append(got[r.ID], rid)
	}
	dups := 0
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		switch copies := got[id]; {
		case len(copies) == 0:
			t.Errorf("%s is not at the destination", id)
		case len(copies) > 1:
			dups++
			if !inFlight[copies[0]] {
				t.Errorf("%s is at the destination %d times, but its copy was not in flight at any kill (replay id %s)", id, len(copies), copies[0])
			}
		}
	}
	t.Logf("%d of %d delivered twice, each in flight at a kill", dups, n)
	if left := crashDestIDs(t, dlq, conn); len(left) != 0 {
		t.Fatalf("the DLQ still holds %d messages after a complete replay", len(left))
	}
}

// crashDestIDs reads the ids of a queue once (peek -o json).
func crashDestIDs(t *testing.T, queue string, conn []string) map[string]int {
	t.Helper()
	out, err := exec.Command(crashBin(t), append([]string{"dlq", "peek", "sqs://" + queue, "-o", "json", "--wait", "1s"}, conn...)...).Output()
	if err != nil {
		t.Fatalf("peek %s: %v", queue, err)
	}
	return crashIDs(t, out)
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

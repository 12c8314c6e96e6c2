package consume_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/pump"
)

// TestConsumeStop_SaysWhatItReleasedUnstarted starts `brighter consume`
// as a process on an SQS queue of fauxqs holding four messages, in each
// pump variant, one performer whose exec handler runs until the stop cuts
// it off: one receive takes all four, one goes to the handler and three
// wait (the Proactor's receive-ahead buffer, the Reactor's received
// batch). A SIGTERM's drain cannot start them, so the stop releases them
// unstarted, each a delivery the broker counts: consume says so in one
// Info line naming how many and which (not the cut-off one), and /events
// carries one released record per message with its delivery count.
func TestConsumeStop_SaysWhatItReleasedUnstarted(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	for _, variant := range []string{"reactor", "proactor"} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			queue := fmt.Sprintf("released-%s-%d", variant, time.Now().UnixNano())
			yaml := fmt.Sprintf(`connections:
  aws: {region: %s, endpoint: %q}
subscriptions:
  - name: orders
    transport: sqs
    channelName: %s
    routingKey: %s
    makeChannels: create
    messagePumpType: %s
    noOfPerformers: 1
    bufferSize: 10
    timeOut: 1s
    drainTimeout: 1s
    emptyChannelDelay: 10ms
    handler:
      type: exec
      command: sh
      args: ["-c", "touch started-$BRIGHTER_MESSAGE_ID; exec sleep 30"]
      timeout: 60s
`, sqstest.Region, emu.Endpoint, queue, queue, variant)
			listenMust(t, os.WriteFile(filepath.Join(dir, "brighter.yaml"), []byte(yaml), 0o600))
			ids := strings.Fields(cmdtest.Brighter(t, dir, "send", "--config", "brighter.yaml", "--subscription", "orders", "--count", "4", "--body", "{}"))
			if len(ids) != 4 {
				t.Fatalf("send printed ids %q, want 4", ids)
			}
			p := startConsume(t, dir, "brighter.yaml")
			var ran string
			waitFor(t, 30*time.Second, "the handler to start", func() bool {
				m, _ := filepath.Glob(filepath.Join(dir, "started-*"))
				if len(m) == 1 {
					ran = strings.TrimPrefix(filepath.Base(m[0]), "started-")
				}
				return ran != ""
			}, p)
			read := readEventsToEnd(t, p.addr, false)
			sent := sigtermExitsWithinBound(t, p)
			var got eventsRead
			select {
			case got = <-read:
			case <-time.After(time.Until(sent.Add(stopBound))):
				t.Fatal("the /events reader never saw the end of its stream")
			}
			want := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == ran })
			if len(want) != 3 {
				t.Fatalf("the handler ran %q, not one of the ids sent %q", ran, ids)
			}
			slices.Sort(want)

			logs := p.stderr.String()
			var lines []struct {
				Level    string   `json:"level"`
				Released int      `json:"released"`
				IDs      []string `json:"message_ids"`
			}
			for l := range strings.SplitSeq(logs, "\n") {
				if !strings.Contains(l, `"msg":"`+pump.LogReleased+`"`) {
					continue
				}
				lines = append(lines, struct {
					Level    string   `json:"level"`
					Released int      `json:"released"`
					IDs      []string `json:"message_ids"`
				}{})
				listenMust(t, json.Unmarshal([]byte(l), &lines[len(lines)-1]))
			}
			if len(lines) != 1 {
				t.Fatalf("%d lines %q, want one for the stop; stderr:\n%s", len(lines), pump.LogReleased, logs)
			}
			line := lines[0]
			slices.Sort(line.IDs)
			if line.Level != "INFO" || line.Released != 3 || !slices.Equal(line.IDs, want) {
				t.Errorf("released line: level %s, released=%d, ids %q; want INFO, 3, %q; stderr:\n%s", line.Level, line.Released, line.IDs, want, logs)
			}

			var released []string
			for l := range strings.SplitSeq(got.body, "\n") {
				var r struct {
					Kind          string `json:"kind"`
					MessageID     string `json:"messageId"`
					DeliveryCount int    `json:"deliveryCount"`
				}
				if json.Unmarshal([]byte(l), &r) != nil || r.Kind != "released" {
					continue
				}
				if r.DeliveryCount != 0 {
					t.Errorf("released record of %s: deliveryCount %d, want 0 (its first delivery)", r.MessageID, r.DeliveryCount)
				}
				released = append(released, r.MessageID)
			}
			slices.Sort(released)
			if !slices.Equal(released, want) {
				t.Errorf("/events released records for %q, want %q; read:\n%s", released, want, got.body)
			}
		})
	}
}

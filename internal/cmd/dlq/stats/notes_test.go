package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQStats_ShowsGroupNotes: the notes the console keeps on failure
// groups (n in dlq triage, the state directory's notes file) are shown by
// dlq stats on fauxqs: a NOTE column, the note on one line, on its
// group's row only, and the group's "note" field with -o json (the text
// as written); a note of another destination's group with the same id is
// not shown, and without notes the table has no NOTE column.
func TestDLQStats_ShowsGroupNotes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "sn", "dlq")
	dlq := "dlq-" + run
	rejected := func(id, why string) *message.Message {
		return message.Stamp(message.New(id, "orders", message.MTCommand, []byte(`{}`)), dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: why}, time.Now())
	}
	ms := []*message.Message{rejected("t1", "timeout after 30s"), rejected("t2", "timeout after 31s"), rejected("v1", "validation failed")}
	for _, m := range ms {
		if err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	timeouts, validation := inspect.GroupOf(ms[0]).ID(), inspect.GroupOf(ms[2]).ID()
	state := t.TempDir()
	stats := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(cmdtest.Bin(t), append(append([]string{"dlq", "stats", "sqs://" + dlq}, conn...), args...)...)
		cmd.Env = append(cmdtest.Env(), "XDG_STATE_HOME="+state) // the last value wins
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("dlq stats %v: %v\n%s%s", args, err, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}
	out, errOut := stats()
	if strings.Contains(out, "NOTE") {
		t.Fatalf("a NOTE column without notes:\n%s", out)
	}
	url, _, ok := strings.Cut(errOut, ": ")
	if !ok || !strings.Contains(errOut, "3 counted, 3 read") {
		t.Fatalf("stats' summary line:\n%s", errOut)
	}
	notes := inspect.NewGroupNotes(filepath.Join(state, "brighter", "replay", "notes.json"))
	text := "payments was down until 14:00;\nreplay after"
	if err := notes.Set(url, timeouts, inspect.GroupNote{Text: text, By: "ops@host", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := notes.Set("sqs://another-"+run, validation, inspect.GroupNote{Text: "another destination's note", At: time.Now()}); err != nil {
		t.Fatal(err)
	}

	out, _ = stats()
	if !strings.Contains(out, "NOTE") {
		t.Fatalf("no NOTE column:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, timeouts) && !strings.Contains(l, "payments was down until 14:00; replay after"):
			t.Errorf("the timeouts group's row lacks its note on one line: %q", l)
		case strings.Contains(l, validation) && strings.Contains(l, "note"):
			t.Errorf("the validation group's row shows a note: %q", l)
		}
	}
	if strings.Contains(out, "another destination's note") {
		t.Errorf("another destination's note is shown:\n%s", out)
	}

	out, _ = stats("-o", "json")
	var st struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	seen := 0
	for _, g := range st.Groups {
		switch g["id"] {
		case timeouts:
			seen++
			if g["note"] != text {
				t.Errorf("the timeouts group's note %q, want %q", g["note"], text)
			}
		case validation:
			seen++
			if _, has := g["note"]; has {
				t.Errorf("the validation group has a note: %v", g)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("groups %v", st.Groups)
	}
}

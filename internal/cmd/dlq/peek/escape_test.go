package peek

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/message"
)

// rawControl returns the first control character (C0, DEL or C1) of s
// other than a line break, or -1 when there is none.
func rawControl(s string) rune {
	for _, r := range s {
		if r != '\n' && (r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0) {
			return r
		}
	}
	return -1
}

// TestDLQPeekAndStats_ShowControlCharactersEscaped: a dead-lettered
// message whose id, original topic and rejection message carry terminal
// control sequences (an OSC 0 title, a CSI clear screen, an OSC 52
// clipboard write ended by BEL, a C1 CSI, DEL), as a sender or a handler
// can write them, is shown by `dlq peek` and `dlq stats` with every
// control character escaped (\x1b, \a, \u009b, \x7f), never raw, on
// fauxqs, and so do the progress lines of `dlq replay --dry-run`; `dlq
// peek -o json` keeps the exact text.
func TestDLQPeekAndStats_ShowControlCharactersEscaped(t *testing.T) {
	t.Parallel()
	q := dlqtest.NewFauxqsDLQ(t, "esc")
	id := "ev\x1b]0;PWNED\x07il-" + q.Run
	topic := q.Dest + "\x1b[2J"
	desc := "bad\nline2 \x1b]52;c;SGVsbG8=\x07 evil \u009b31m \x7f end"
	m := message.New(id, topic, message.MTCommand, []byte(`{}`))
	q.Send(t, message.Stamp(m, q.DLQ, message.Rejection{Reason: message.ReasonDeliveryError, Description: desc}, time.Now()))
	dir := t.TempDir()
	for _, verb := range []string{"peek", "stats"} {
		code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"dlq", verb, "sqs://" + q.DLQ, "--wait", "1s"}, q.Conn...)...)
		if code != cmdutil.ExitOK {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", verb, code, out, errOut)
		}
		if r := rawControl(out); r >= 0 {
			t.Errorf("%s wrote the control character %U raw:\n%q", verb, r, out)
		}
		want := []string{`\x1b]52;c;SGVsbG8=\a evil \u009b31m \x7f end`, `ev\x1b]0;PWNED\ail-`, `\x1b[2J`}
		if verb == "stats" { // groups by the normalised rejection message
			want = []string{`\x1b]<n>;c;SGVsbG<n>=\a evil \u009b<n>m \x7f end`, `\x1b[2J`}
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s does not show %s escaped:\n%s", verb, w, out)
			}
		}
	}
	// A replay's progress lines name the id and the destination.
	code, rout, rerr := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "replay", "sqs://" + q.DLQ, "--dry-run", "--wait", "1s"}, q.Conn...)...)
	if r := rawControl(rout + rerr); r >= 0 {
		t.Errorf("replay --dry-run (exit %d) wrote the control character %U raw:\n%q\n%q", code, r, rout, rerr)
	}
	if !strings.Contains(rout, `ev\x1b]0;PWNED\ail-`) {
		t.Errorf("replay --dry-run (exit %d) does not name the id escaped:\n%s\nstderr:\n%s", code, rout, rerr)
	}
	out := cmdtest.Brighter(t, dir, append([]string{"dlq", "peek", "sqs://" + q.DLQ, "--wait", "1s", "-o", "json"}, q.Conn...)...)
	var got struct {
		ID  string         `json:"id"`
		Bag map[string]any `json:"bag"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil {
		t.Fatalf("peek -o json: %v\n%s", err, out)
	}
	if got.ID != id || got.Bag[message.KeyRejectionMessage] != desc || got.Bag[message.KeyOriginalTopic] != topic {
		t.Errorf("peek -o json changed the text: id %q, rejection message %q, original topic %q; want %q, %q, %q", got.ID, got.Bag[message.KeyRejectionMessage], got.Bag[message.KeyOriginalTopic], id, desc, topic)
	}
}

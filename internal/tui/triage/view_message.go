package triage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// headerFields are every header of x, name and value, the bag's entries
// last (sorted by key): what the message view shows and a search looks
// in. Times are absolute (RFC 3339, UTC).
func headerFields(x *message.Message) [][2]string {
	h := x.Header
	out := [][2]string{
		{"id", h.MessageID},
		{"topic", h.Topic},
		{"message type", h.MessageType.String()},
		{"content type", h.ContentType},
		{"correlation id", h.CorrelationID},
		{"reply to", h.ReplyTo},
		{"partition key", h.PartitionKey},
		{"created", wireTime(h.Timestamp)},
		{"handled count", strconv.Itoa(h.HandledCount) + " (the count presented: 0 on the first delivery)"},
		{"source", h.Source},
		{"type", h.Type},
		{"spec version", h.SpecVersion},
		{"data schema", h.DataSchema},
		{"subject", h.Subject},
		{"data ref", h.DataRef},
		{"traceparent", h.TraceParent},
		{"tracestate", h.TraceState},
		{"baggage", h.Baggage},
	}
	if h.Delay > 0 {
		out = append(out, [2]string{"delay", h.Delay.String()})
	}
	for _, k := range slices.Sorted(maps.Keys(h.Bag)) {
		out = append(out, [2]string{k, fmt.Sprint(h.Bag[k])})
	}
	return out
}

func wireTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// detailLines show one message: the rejection (the cause wrapped whole),
// every header with absolute times, the bag, the body.
func (m Model) detailLines() []string {
	x := m.curMsg
	h := x.Header
	d := inspect.Describe(x)
	sel := ""
	if m.sel[h.MessageID] {
		sel = " (selected)"
	}
	w := max(m.width-2, 10)
	lines := []string{
		m.styles.Section.Render("message " + kit.Visible(h.MessageID) + sel),
		"rejection",
		fmt.Sprintf("  %s from %s after %s, %s (%s)", kit.Visible(d.Reason), kit.Visible(d.OriginalTopic), times(deliveries(d)), m.ago(d.RejectedAt), wireTime(d.RejectedAt)),
	}
	if m.restoredMark(h.MessageID) != "" {
		lines = append(lines, "  ↺ restored: the dead-letter destination holds this id again (the archive file keeps its record)")
	}
	if n := m.copies[h.MessageID]; n > 1 {
		lines = append(lines, fmt.Sprintf("  %d stored copies of this id (×%d): archive, purge and replay act on every one, a replay publishes one", n, n))
	}
	for l := range strings.SplitSeq(kit.Wrap(cause(d), w), "\n") {
		lines = append(lines, "  "+l)
	}
	for _, hl := range m.historyLines(x) {
		for i, l := range strings.Split(kit.Wrap(kit.Visible(hl), max(w-4, 10)), "\n") {
			if i > 0 {
				l = "    " + l
			}
			lines = append(lines, l)
		}
	}
	lines = append(lines, "headers")
	bag := false
	for _, f := range headerFields(x) {
		if _, ok := h.Bag[f[0]]; ok && !bag {
			lines, bag = append(lines, "bag"), true
		}
		if f[1] == "" {
			continue
		}
		if bag && (slices.Contains(message.RejectionKeys[:], f[0]) || f[0] == message.KeyPumpRejectionReason) && f[0] != message.KeyOriginalTopic {
			continue // shown as the rejection above
		}
		for i, l := range strings.Split(kit.Wrap(kit.Visible(f[0]+": "+f[1]), w), "\n") {
			if i > 0 {
				l = "  " + l
			}
			lines = append(lines, "  "+l)
		}
	}
	lines = append(lines, "body")
	for l := range strings.SplitSeq(kit.VisibleLines(PrettyBody(h.ContentType, x.Body)), "\n") {
		lines = append(lines, "  "+l)
	}
	start := min(m.cursor[viewMessage], max(len(lines)-1, 0))
	return lines[start:]
}

func times(n int) string {
	if n == 1 {
		return "1 delivery"
	}
	return fmt.Sprintf("%d deliveries", n)
}

// PrettyBody is body as the console shows it: JSON (by content type)
// indented; other UTF-8 text as it is; anything else as a byte count.
func PrettyBody(contentType string, body []byte) string {
	if inspect.IsJSON(contentType) {
		var buf bytes.Buffer
		if json.Indent(&buf, body, "", "  ") == nil {
			return buf.String()
		}
	}
	if !isText(body) {
		return fmt.Sprintf("(%d bytes, not text)", len(body))
	}
	return string(body)
}

func isText(b []byte) bool {
	return !bytes.ContainsRune(b, 0) && strings.ToValidUTF8(string(b), "\uFFFD") == string(b)
}

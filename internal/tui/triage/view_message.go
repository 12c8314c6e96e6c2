package triage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// detailLines show one message: headers, rejection metadata, bag, body.
func (m Model) detailLines() []string {
	x := m.curMsg
	h := x.Header
	d := inspect.Describe(x)
	sel := ""
	if m.sel[h.MessageID] {
		sel = " (selected)"
	}
	lines := []string{
		m.styles.Section.Render("message " + h.MessageID + sel),
		"headers",
		"  topic " + h.Topic + " · type " + h.MessageType.String() + " · content type " + h.ContentType,
		"  correlation id " + h.CorrelationID + " · partition key " + h.PartitionKey + " · created " + m.ago(h.Timestamp),
		"rejection",
		fmt.Sprintf("  %s from %s after %d deliveries, %s", d.Reason, d.OriginalTopic, d.HandledCount, m.ago(d.RejectedAt)),
		"  " + kit.CollapseSpace(d.RejectionMessage),
		"bag",
	}
	for _, k := range slices.Sorted(maps.Keys(h.Bag)) {
		if slices.Contains(message.RejectionKeys[:], k) || k == message.KeyPumpRejectionReason {
			continue
		}
		lines = append(lines, fmt.Sprintf("  %s: %v", k, h.Bag[k]))
	}
	lines = append(lines, "body")
	for l := range strings.SplitSeq(PrettyBody(h.ContentType, x.Body), "\n") {
		lines = append(lines, "  "+l)
	}
	start := min(m.cursor[viewMessage], max(len(lines)-1, 0))
	return lines[start:]
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

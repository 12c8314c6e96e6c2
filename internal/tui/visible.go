package tui

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// visibleRecord returns r as the screen may show it: every text a message,
// a handler or a broker supplied (the message id, the outcome, reason,
// route and destination, the description, the error, a log line's text
// and attributes, the message detail's headers, bag and body preview)
// through kit.Visible, so that none reaches the terminal as a control
// sequence (docs/security.md); a one-line text's white space (line
// breaks, tabs) collapsed to single spaces first. r is not modified (a
// record may be shared with the /events readers); the copy returned is
// r itself when nothing needed escaping.
func visibleRecord(r *observe.Record) *observe.Record {
	c := *r
	c.MessageID = kit.Visible(r.MessageID)
	c.Outcome = kit.Visible(r.Outcome)
	c.Reason = kit.Visible(r.Reason)
	c.Route = kit.Visible(r.Route)
	c.Destination = kit.Visible(r.Destination)
	c.Description = visibleLine(r.Description)
	c.Error = visibleLine(r.Error)
	c.Text = visibleLine(r.Text)
	changed := c.MessageID != r.MessageID || c.Outcome != r.Outcome || c.Reason != r.Reason || c.Route != r.Route ||
		c.Destination != r.Destination || c.Description != r.Description || c.Error != r.Error || c.Text != r.Text
	for i, a := range r.Attrs {
		if v, k := visibleLine(a.Value), kit.Visible(a.Key); v != a.Value || k != a.Key {
			if &c.Attrs[0] == &r.Attrs[0] { // still r's: copy before writing
				c.Attrs = append([]observe.LogAttr(nil), r.Attrs...)
			}
			c.Attrs[i] = observe.LogAttr{Key: k, Value: v}
			changed = true
		}
	}
	if d := r.Detail(); d != nil {
		if vd, ok := visibleDetail(d); ok {
			c.Message, changed = vd, true
		}
	}
	if !changed {
		return r
	}
	return &c
}

// visibleLine is s on one line (its white space runs one space) through
// kit.Visible.
func visibleLine(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f || r >= 0x80 }) < 0 {
		return s // printable ASCII: the common case, unchanged
	}
	return kit.Visible(kit.CollapseSpace(s))
}

// visibleDetail returns a copy of d with its texts through kit.Visible
// (the body preview keeping its lines, a CRLF read as a line break; a bag
// value that is not a string, number or boolean shown as fmt.Sprint
// shows it) and true, or d and false when nothing needed escaping.
func visibleDetail(d *observe.MessageDetail) (*observe.MessageDetail, bool) {
	c := *d
	c.Topic, c.MessageType, c.CorrelationID = kit.Visible(d.Topic), kit.Visible(d.MessageType), kit.Visible(d.CorrelationID)
	c.ContentType, c.PartitionKey, c.TraceParent = kit.Visible(d.ContentType), kit.Visible(d.PartitionKey), kit.Visible(d.TraceParent)
	c.BodyPreview = kit.VisibleLines(strings.ReplaceAll(d.BodyPreview, "\r\n", "\n"))
	changed := c.Topic != d.Topic || c.MessageType != d.MessageType || c.CorrelationID != d.CorrelationID ||
		c.ContentType != d.ContentType || c.PartitionKey != d.PartitionKey || c.TraceParent != d.TraceParent ||
		c.BodyPreview != d.BodyPreview
	var bag map[string]any // made only when an entry needs escaping
	for k, v := range d.Bag {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case nil, bool, float64, int, int64, json.Number:
			if vk := kit.Visible(k); vk != k {
				if bag == nil {
					bag = maps.Clone(d.Bag)
				}
				delete(bag, k)
				bag[vk] = v
			}
			continue
		default:
			s = fmt.Sprint(v)
		}
		vs, vk := kit.Visible(s), kit.Visible(k)
		if vs == s && vk == k {
			continue
		}
		if bag == nil {
			bag = maps.Clone(d.Bag)
		}
		delete(bag, k)
		bag[vk] = vs
	}
	if bag != nil {
		c.Bag, changed = bag, true
	}
	if !changed {
		return d, false
	}
	return &c, true
}

package triage

import (
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// groupBy is the console's grouping key (g cycles it).
type groupBy int

const (
	// byCause is the failure group of dlq stats (inspect.GroupOf): original
	// topic, message type, reason and the normalised rejection message.
	// Its ids are dlq's --group-id.
	byCause groupBy = iota
	// byReason groups by the rejection reason alone (DeliveryError,
	// Unacceptable...): the exception type of a ServicePulse.
	byReason
	// byTopic groups by the original topic.
	byTopic
	// byHandler groups by original topic and message type: the handler a
	// subscription runs for that type.
	byHandler
)

var groupByNames = []string{"cause", "reason", "topic", "handler"}

// keyOf is x's group under the grouping b, and the group's id: the
// failure group's id for byCause, else the grouping's name and its values
// ("topic:orders"), which no --group-id takes.
func keyOf(b groupBy, x *message.Message) (inspect.GroupKey, string) {
	k := inspect.GroupOf(x)
	switch b {
	case byReason:
		k = inspect.GroupKey{Reason: k.Reason}
		return k, "reason:" + k.Reason
	case byTopic:
		k = inspect.GroupKey{OriginalTopic: k.OriginalTopic}
		return k, "topic:" + k.OriginalTopic
	case byHandler:
		k = inspect.GroupKey{OriginalTopic: k.OriginalTopic, MessageType: k.MessageType}
		return k, "handler:" + k.OriginalTopic + "/" + k.MessageType
	}
	return k, k.ID()
}

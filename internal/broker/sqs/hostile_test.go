package sqs

import (
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// hostileSQS builds a received SQS message with the given string attributes
// ("" values are left out) and ApproximateReceiveCount.
func hostileSQS(body string, attempt string, attrs map[string]string) types.Message {
	sm := types.Message{MessageId: aws.String("sqs-1"), ReceiptHandle: aws.String("rh"), Body: aws.String(body),
		Attributes: map[string]string{"ApproximateReceiveCount": attempt}, MessageAttributes: map[string]types.MessageAttributeValue{}}
	for k, v := range attrs {
		if v != "" {
			sm.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	return sm
}

// A hostile count: a stamped count at the limit and beyond (the overflow value
// included) is Unacceptable with a rejection message naming the field and
// the problem, and the message keeps its Brighter id, bag and correlation id.
func TestStampedCountAtLimitAndBeyondIsUnacceptable_R4(t *testing.T) {
	for _, c := range []string{"1000000", "1000001", "9223372036854775807", "9223372036854775808", "-1", "three", "1e3"} {
		sm := hostileSQS("b", "2", map[string]string{AttrID: "brighter-id", AttrCorrelationID: "corr",
			AttrBag: `{"handled-count":"` + c + `","tenant":"acme"}`})
		m, err := Decode(sm, DecodeOptions{DefaultTopic: "q"})
		if err == nil || m.Header.MessageType != message.MTUnacceptable {
			t.Errorf("count %s: err %v type %v, want Unacceptable", c, err, m.Header.MessageType)
			continue
		}
		if m.Header.MessageID != "brighter-id" || m.Header.CorrelationID != "corr" || m.Header.Bag["tenant"] != "acme" || m.Header.HandledCount < 0 {
			t.Errorf("count %s: identity lost: %+v", c, m.Header)
		}
		if !strings.Contains(m.Undecodable, "bag handled-count") {
			t.Errorf("count %s: Undecodable %q does not name the field", c, m.Undecodable)
		}
	}
	ok := hostileSQS("b", "1", map[string]string{AttrBag: `{"handled-count":"999999"}`})
	if m, err := Decode(ok, DecodeOptions{}); err != nil || m.Header.HandledCount != 999999 {
		t.Errorf("count 999999 (limit-1): %v %d, want accepted", err, m.Header.HandledCount)
	}
}

// An undecodable message keeps what can be kept: the Brighter id,
// every readable attribute, the raw message type text, and a reason naming
// the field. Its routed copy's originalMessageType is the type it
// carried, never MT_UNACCEPTABLE.
func TestUndecodableKeepsIdentity(t *testing.T) {
	cases := map[string]struct {
		attrs  map[string]string
		field  string
		wireMT string
	}{
		"MT_QUIT": {map[string]string{AttrMessageType: "MT_QUIT", AttrBag: `{"k":"v"}`}, "message-type", "MT_QUIT"},
		"MT_NONE": {map[string]string{AttrMessageType: "MT_NONE", AttrBag: `{"k":"v"}`}, "message-type", "MT_NONE"},
		// No type attribute: Brighter reads MT_EVENT, and the routed copy
		// says so, not MT_UNACCEPTABLE.
		"bag not JSON":    {map[string]string{AttrBag: `{"k":`, "custom": "v"}, "bag", "MT_EVENT"},
		"gzip not base64": {map[string]string{AttrContentType: "application/gzip", AttrMessageType: "MT_COMMAND", AttrBag: `{"k":"v"}`}, "body", "MT_COMMAND"},
	}
	for name, c := range cases {
		c.attrs[AttrID] = "brighter-id"
		c.attrs[AttrCorrelationID] = "corr"
		m, err := Decode(hostileSQS("%%% not base64", "1", c.attrs), DecodeOptions{DefaultTopic: "q"})
		if err == nil || m.Header.MessageType != message.MTUnacceptable {
			t.Fatalf("%s: err %v type %v", name, err, m.Header.MessageType)
		}
		if m.Header.MessageID != "brighter-id" || m.Header.CorrelationID != "corr" || string(m.Body) != "%%% not base64" {
			t.Errorf("%s: id %q corr %q body %q", name, m.Header.MessageID, m.Header.CorrelationID, m.Body)
		}
		if !strings.HasPrefix(m.Undecodable, c.field) {
			t.Errorf("%s: Undecodable %q, want it to start with the field %q", name, m.Undecodable, c.field)
		}
		if m.WireMessageType != c.wireMT {
			t.Errorf("%s: WireMessageType %q, want %q", name, m.WireMessageType, c.wireMT)
		}
		if name == "bag not JSON" && (m.Header.Bag["custom"] != "v" || m.Header.Bag[AttrBag] != `{"k":`) {
			t.Errorf("%s: bag %v, want the custom attribute and the raw bag text", name, m.Header.Bag)
		}
		if name != "bag not JSON" && m.Header.Bag["k"] != "v" {
			t.Errorf("%s: bag %v lost its entries", name, m.Header.Bag)
		}
		routed := message.Stamp(m, "inv", message.Rejection{Reason: message.ReasonUnacceptable, Description: m.Undecodable}, m.Header.Timestamp)
		if routed.Header.Bag[message.KeyOriginalMessageType] != c.wireMT {
			t.Errorf("%s: originalMessageType %v, want the raw %q", name, routed.Header.Bag[message.KeyOriginalMessageType], c.wireMT)
		}
	}
}

// FuzzDecodeCountBounded is the hostile-count codec property on SQS
// (docs/adr/0001-delivery-count-contract.md §9): for every
// input the presented count is >= 0; an input that does not decode is
// MT_UNACCEPTABLE with a reason (routed at once, never budgeted); and for
// every decodable input the budget a pump judges (broker.BudgetSpent)
// reaches R by the R-th delivery, forged or genuine rejection metadata or
// not. Seeds (overflow, limit, forged metadata, undecodable) are committed in
// testdata/fuzz/FuzzDecodeCountBounded.
func FuzzDecodeCountBounded(f *testing.F) {
	f.Add(`{"handled-count":"9223372036854775807"}`, "", "1", uint8(3))
	f.Add(`{"handled-count":"5","originalTopic":"t","rejectionTimestamp":"x"}`, "MT_EVENT", "1", uint8(3))
	f.Add(`not json`, "MT_QUIT", "9223372036854775807", uint8(2))
	f.Fuzz(func(t *testing.T, bag, mt, attempt string, r uint8) {
		budget := int(r%10) + 1
		attrs := map[string]string{AttrBag: bag, AttrMessageType: mt}
		// The broker's own counter, as hostile as the fuzzer likes.
		m, _ := Decode(hostileSQS("body", attempt, attrs), DecodeOptions{DefaultTopic: "q"})
		if m == nil || m.Header.HandledCount < 0 || broker.BudgetSpent(m) < 1 {
			t.Fatalf("attempt %q: message %v", attempt, m)
		}
		for k := 1; k <= budget; k++ {
			var err error
			m, err = Decode(hostileSQS("body", strconv.Itoa(k), attrs), DecodeOptions{DefaultTopic: "q"})
			if m.Header.HandledCount < 0 {
				t.Fatalf("delivery %d presents %d", k, m.Header.HandledCount)
			}
			if err != nil {
				if m.Header.MessageType != message.MTUnacceptable || m.Undecodable == "" {
					t.Fatalf("undecodable presented as %v with reason %q", m.Header.MessageType, m.Undecodable)
				}
				return
			}
			if m.Header.MessageType == message.MTQuit || m.Header.MessageType == message.MTNone {
				t.Fatalf("a wire message decoded as %v", m.Header.MessageType)
			}
		}
		if spent := broker.BudgetSpent(m); spent < budget {
			t.Fatalf("delivery %d of a decodable message spends %d of budget %d: the pump would not reject it", budget, spent, budget)
		}
	})
}

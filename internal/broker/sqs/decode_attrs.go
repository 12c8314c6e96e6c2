package sqs

import (
	"encoding/base64"
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/message"
)

// wireAttrs are the message attributes decode reads, taken in one pass
// over the attribute map (the SQS message's, or the SNS envelope's): each
// field is its attribute's value, "" when absent.
type wireAttrs struct {
	id, topic, messageType, dataContentType, contentType string
	correlationID, replyTo, time, timestamp, subject     string
	handledCount, source, typ, dataSchema, specVersion   string
	bag, ceHeaders                                       string
	// hasMessageType is whether the message-type attribute is present
	// (an empty one is read, and refused).
	hasMessageType bool
	// foreign counts the attributes that are not Brighter's (knownAttr),
	// which decode surfaces in the bag.
	foreign int
}

// take keeps value when name is an attribute decode reads; it reports
// whether name is one of Brighter's (knownAttr).
func (w *wireAttrs) take(name, value string) bool {
	switch name {
	case AttrID:
		w.id = value
	case AttrTopic:
		w.topic = value
	case AttrMessageType:
		w.messageType, w.hasMessageType = value, true
	case AttrDataContentType:
		w.dataContentType = value
	case AttrContentType:
		w.contentType = value
	case AttrCorrelationID:
		w.correlationID = value
	case AttrReplyTo:
		w.replyTo = value
	case AttrTime:
		w.time = value
	case AttrTimestamp:
		w.timestamp = value
	case AttrSubject:
		w.subject = value
	case AttrHandledCount:
		w.handledCount = value
	case AttrSource:
		w.source = value
	case AttrType:
		w.typ = value
	case AttrDataSchema:
		w.dataSchema = value
	case AttrSpecVersion:
		w.specVersion = value
	case AttrBag:
		w.bag = value
	case AttrCloudEventHeaders:
		w.ceHeaders = value
	default:
		return knownAttr(name)
	}
	return true
}

// sqsAttrValue is an SQS message attribute's value as decode reads it: the
// string value, a binary value in base64, else "".
func sqsAttrValue(v *types.MessageAttributeValue) string {
	if v.StringValue != nil {
		return *v.StringValue
	}
	if v.BinaryValue != nil {
		return base64.StdEncoding.EncodeToString(v.BinaryValue)
	}
	return ""
}

// readAttrs takes the attributes of sm (or of env, when not nil) in one
// pass.
func readAttrs(sm *types.Message, env *envelope) wireAttrs {
	var w wireAttrs
	if env != nil {
		for k, v := range env.MessageAttributes {
			if !w.take(k, v.Value) {
				w.foreign++
			}
		}
		return w
	}
	for k := range sm.MessageAttributes {
		v := sm.MessageAttributes[k]
		if !w.take(k, sqsAttrValue(&v)) {
			w.foreign++
		}
	}
	return w
}

// addForeign puts each attribute of sm (or of env) that is not Brighter's
// into bag, unless the bag already holds its name.
func addForeign(bag message.Bag, sm *types.Message, env *envelope) {
	if env != nil {
		for k, v := range env.MessageAttributes {
			if _, dup := bag[k]; !dup && !knownAttr(k) {
				bag[k] = v.Value
			}
		}
		return
	}
	for k, v := range sm.MessageAttributes {
		if _, dup := bag[k]; !dup && !knownAttr(k) {
			bag[k] = sqsAttrValue(&v)
		}
	}
}

// flatBag collects a flat bag's members, keeping the stamped count
// (handled-count) aside: the bag then needs no entry for it.
type flatBag struct {
	bag        message.Bag
	stamped    string
	hasStamped bool
}

func (f *flatBag) put(k, v string) {
	if k == BagHandledCount {
		f.stamped, f.hasStamped = v, true
		return
	}
	f.bag[k] = v
}

// ceHeaders are the members of the cloudeventheaders attribute decode
// reads, each under its exact key (as a map's look-up matches it: "Type"
// is not "type"); "" when absent.
type ceHeaders struct {
	dataContentType, subject, source, typ, dataSchema, specVersion string
	dataRef, traceParent, traceState, baggage                      string
}

// read takes the members of s, the cloudeventheaders attribute. The flat
// object of strings Brighter writes is read without encoding/json
// (message.ScanFlatStrings: the same members, the last of a repeated key
// winning); any other text goes to encoding/json into a map, as it always
// did, and a malformed one is swallowed, as Brighter swallows it (a
// syntax error leaves nothing read; a member that is not a string is
// skipped).
func (c *ceHeaders) read(s string) {
	if message.ScanFlatStrings(s, c.set) {
		return
	}
	*c = ceHeaders{}
	var slow map[string]string
	_ = json.Unmarshal([]byte(s), &slow)
	for k, v := range slow {
		c.set(k, v)
	}
}

// set keeps v when key is a member decode reads.
func (c *ceHeaders) set(key, v string) {
	switch key {
	case AttrDataContentType:
		c.dataContentType = v
	case AttrSubject:
		c.subject = v
	case AttrSource:
		c.source = v
	case AttrType:
		c.typ = v
	case AttrDataSchema:
		c.dataSchema = v
	case AttrSpecVersion:
		c.specVersion = v
	case AttrDataRef:
		c.dataRef = v
	case AttrTraceParent:
		c.traceParent = v
	case AttrTraceState:
		c.traceState = v
	case AttrBaggage:
		c.baggage = v
	}
}

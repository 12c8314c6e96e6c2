package message

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Record is the JSON shape of one message in a JSON-lines file: what
// `brighter dlq peek --output json` prints and the memory transport reads
// back. Every header field is present; the body is text when it is valid
// UTF-8 and base64 otherwise (bodyEncoding says which). Delay is in
// milliseconds.
type Record struct {
	ID            string `json:"id"`
	Topic         string `json:"topic"`
	MessageType   string `json:"messageType"`
	HandledCount  int    `json:"handledCount"`
	Timestamp     string `json:"timestamp"`
	CorrelationID string `json:"correlationId"`
	ReplyTo       string `json:"replyTo"`
	ContentType   string `json:"contentType"`
	PartitionKey  string `json:"partitionKey"`
	DelayMs       int64  `json:"delayMs"`
	Source        string `json:"source"`
	Type          string `json:"type"`
	SpecVersion   string `json:"specVersion"`
	DataSchema    string `json:"dataSchema"`
	Subject       string `json:"subject"`
	DataRef       string `json:"dataRef"`
	TraceParent   string `json:"traceParent"`
	TraceState    string `json:"traceState"`
	Baggage       string `json:"baggage"`
	Bag           Bag    `json:"bag"`
	Body          string `json:"body"`
	BodyEncoding  string `json:"bodyEncoding"`
}

// Body encodings of a Record.
const (
	// BodyUTF8 means Record.Body is the body's text.
	BodyUTF8 = "utf8"
	// BodyBase64 means Record.Body is standard base64 of the body's bytes.
	BodyBase64 = "base64"
)

// ToRecord converts a message to its JSON-lines record.
func ToRecord(m *Message) Record {
	h := &m.Header
	r := Record{
		ID: h.MessageID, Topic: h.Topic, MessageType: h.MessageType.String(), HandledCount: h.HandledCount,
		CorrelationID: h.CorrelationID, ReplyTo: h.ReplyTo, ContentType: h.ContentType, PartitionKey: h.PartitionKey,
		DelayMs: h.Delay.Milliseconds(), Source: h.Source, Type: h.Type, SpecVersion: h.SpecVersion,
		DataSchema: h.DataSchema, Subject: h.Subject, DataRef: h.DataRef, TraceParent: h.TraceParent,
		TraceState: h.TraceState, Baggage: h.Baggage, Bag: h.Bag,
	}
	if !h.Timestamp.IsZero() {
		r.Timestamp = FormatWireTime(h.Timestamp)
	}
	if r.Bag == nil {
		r.Bag = Bag{}
	}
	if utf8.Valid(m.Body) {
		r.Body, r.BodyEncoding = string(m.Body), BodyUTF8
	} else {
		r.Body, r.BodyEncoding = base64.StdEncoding.EncodeToString(m.Body), BodyBase64
	}
	return r
}

// FromRecord converts a record back to a message. Missing fields take
// Brighter's defaults (MT_EVENT, now, the default content type). It returns
// an error naming the field for an unknown message type, a bad timestamp, a
// negative handled count, an empty id or a body that is not valid base64.
func FromRecord(r Record) (*Message, error) {
	if r.ID == "" {
		return nil, errors.New("id: must not be empty")
	}
	mt := MTEvent
	if r.MessageType != "" {
		var ok bool
		if mt, ok = ParseMessageType(r.MessageType); !ok {
			return nil, fmt.Errorf("messageType: unknown value %q: valid values are MT_COMMAND, MT_EVENT, MT_DOCUMENT", r.MessageType)
		}
	}
	if r.HandledCount < 0 {
		return nil, fmt.Errorf("handledCount: %d is negative", r.HandledCount)
	}
	if r.HandledCount >= HandledCountLimit {
		return nil, fmt.Errorf("handledCount: %d is at or above the limit of %d", r.HandledCount, HandledCountLimit)
	}
	m := New(r.ID, r.Topic, mt, nil)
	h := &m.Header
	if r.Timestamp != "" {
		t, ok := ParseWireTime(r.Timestamp)
		if !ok {
			return nil, fmt.Errorf("timestamp: %q is not an RFC 3339 time", r.Timestamp)
		}
		h.Timestamp = t
	}
	h.HandledCount, h.CorrelationID, h.ReplyTo, h.PartitionKey = r.HandledCount, r.CorrelationID, r.ReplyTo, r.PartitionKey
	if r.ContentType != "" {
		h.ContentType = r.ContentType
	}
	if r.Source != "" {
		h.Source = r.Source
	}
	if r.SpecVersion != "" {
		h.SpecVersion = r.SpecVersion
	}
	h.Delay = time.Duration(r.DelayMs) * time.Millisecond
	h.Type, h.DataSchema, h.Subject, h.DataRef = r.Type, r.DataSchema, r.Subject, r.DataRef
	h.TraceParent, h.TraceState, h.Baggage = r.TraceParent, r.TraceState, r.Baggage
	if r.Bag != nil {
		h.Bag = r.Bag
	}
	switch r.BodyEncoding {
	case "", BodyUTF8:
		m.Body = []byte(r.Body)
	case BodyBase64:
		b, err := base64.StdEncoding.DecodeString(r.Body)
		if err != nil {
			return nil, fmt.Errorf("body: not valid base64: %w", err)
		}
		m.Body = b
	default:
		return nil, fmt.Errorf("bodyEncoding: unknown value %q: valid values are utf8, base64", r.BodyEncoding)
	}
	return m, nil
}

// ErrNotUTF8 is returned (wrapped) by UnmarshalRecordJSON for a line that
// is not UTF-8 text.
var ErrNotUTF8 = errors.New("not UTF-8 text")

// notUTF8 is ErrNotUTF8 wrapped with the offset (from 0) of line's first
// byte that is not part of a UTF-8 character, which line must have.
func notUTF8(line []byte) error {
	off := 0
	for off < len(line) {
		r, n := utf8.DecodeRune(line[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	return fmt.Errorf("byte %d (0x%02x): %w; JSON must be UTF-8: write a binary body base64-encoded, with \"bodyEncoding\":\"base64\"", off, line[off], ErrNotUTF8)
}

// MarshalRecordJSON returns the message's record as one line of JSON (no
// trailing newline).
func MarshalRecordJSON(m *Message) ([]byte, error) {
	b, err := json.Marshal(ToRecord(m))
	if err != nil {
		return nil, fmt.Errorf("encode message %s: %w", m.Header.MessageID, err)
	}
	return b, nil
}

// UnmarshalRecordJSON decodes one line of JSON into a message. Unknown fields
// are errors, so a typo is not silently ignored, and so is a line that is
// not UTF-8 (ErrNotUTF8, wrapped, with the offset of the first bad byte):
// JSON is UTF-8, and decoding would turn each bad byte into U+FFFD, a body
// changed without a word; a binary body is written base64 with
// "bodyEncoding":"base64".
func UnmarshalRecordJSON(line []byte) (*Message, error) {
	if !utf8.Valid(line) {
		return nil, fmt.Errorf("decode message record: %w", notUTF8(line))
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode message record: %w", err)
	}
	return FromRecord(r)
}

package inspect

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// Bag keys an edited replay records (`dlq edit`).
const (
	// KeyEditedAt is when the message was edited (RFC 3339, UTC).
	KeyEditedAt = "editedAt"
	// KeyOriginalBodySHA256 is the SHA-256 of the dead-lettered body the
	// edit started from, lowercase hex (64 characters).
	KeyOriginalBodySHA256 = "originalBodySha256"
)

// ErrInvalidBody is returned (wrapped) by ValidateBody for a body its
// content type says is JSON that does not parse.
var ErrInvalidBody = errors.New("the body is not valid JSON, as its content type says it must be")

// ErrChanged is returned (wrapped) by Edit.Transform when the message read
// for the replay is not the one that was edited (its body's SHA-256
// differs): the edited copy is not sent and the message stays.
var ErrChanged = errors.New("the dead-lettered message changed since it was read for editing; nothing was sent")

// EditHeaders is the part of a message's header `dlq edit --headers` shows
// and takes back as YAML (field names as the JSON records of peek -o json
// write them). The id, topic, timestamp, handled count and delay are not in
// it: replay sets them (--new-id, --to, --keep-count). Bag is the bag
// without the rejection metadata and the keys the replay writes itself.
type EditHeaders struct {
	MessageType   string      `json:"messageType"`
	CorrelationID string      `json:"correlationId"`
	ReplyTo       string      `json:"replyTo"`
	ContentType   string      `json:"contentType"`
	PartitionKey  string      `json:"partitionKey"`
	Source        string      `json:"source"`
	Type          string      `json:"type"`
	SpecVersion   string      `json:"specVersion"`
	DataSchema    string      `json:"dataSchema"`
	Subject       string      `json:"subject"`
	DataRef       string      `json:"dataRef"`
	TraceParent   string      `json:"traceParent"`
	TraceState    string      `json:"traceState"`
	Baggage       string      `json:"baggage"`
	Bag           message.Bag `json:"bag"`
}

// replayKeys are the bag keys a replay (and an edit) writes itself; an
// edit shows and takes the bag without them, and the edited copy keeps the
// replay copy's own (its fresh replayId above all: the replay journal and
// an inbox know the copy by it).
var replayKeys = []string{message.KeyReplayedFrom, message.KeyReplayedAt, KeyReplayID, KeyDeduplicationID, KeyEditedAt, KeyOriginalBodySHA256, "ReceiptHandle"}

// HeadersOf returns the editable header of m (m is not changed).
func HeadersOf(m *message.Message) EditHeaders {
	h := m.Header
	bag := maps.Clone(h.Bag)
	if bag == nil {
		bag = message.Bag{}
	}
	message.StripRejection(bag)
	for _, k := range replayKeys {
		delete(bag, k)
	}
	return EditHeaders{
		MessageType: h.MessageType.String(), CorrelationID: h.CorrelationID, ReplyTo: h.ReplyTo,
		ContentType: h.ContentType, PartitionKey: h.PartitionKey, Source: h.Source, Type: h.Type,
		SpecVersion: h.SpecVersion, DataSchema: h.DataSchema, Subject: h.Subject, DataRef: h.DataRef,
		TraceParent: h.TraceParent, TraceState: h.TraceState, Baggage: h.Baggage, Bag: bag,
	}
}

// fields maps each header name of EditHeaders to its field.
func (h *EditHeaders) fields() map[string]*string {
	return map[string]*string{
		"messageType": &h.MessageType, "correlationId": &h.CorrelationID, "replyTo": &h.ReplyTo,
		"contentType": &h.ContentType, "partitionKey": &h.PartitionKey, "source": &h.Source,
		"type": &h.Type, "specVersion": &h.SpecVersion, "dataSchema": &h.DataSchema,
		"subject": &h.Subject, "dataRef": &h.DataRef, "traceParent": &h.TraceParent,
		"traceState": &h.TraceState, "baggage": &h.Baggage,
	}
}

// ErrNotSettable is returned (wrapped) by CheckSetKey for a key
// `dlq edit --set` must not set: the replay's own bag keys, the rejection
// metadata and the header fields that are not strings.
var ErrNotSettable = errors.New("cannot be set with --set")

// headerNotSettable are the header fields of a record (message.Record) an
// edit does not take as strings, each with what sets it instead.
var headerNotSettable = map[string]string{
	"id":           "the copy keeps the message id; --new-id gives it a new one",
	"topic":        "the destination is replay's: --to, else the originalTopic",
	"handledCount": "the copy's handled count is 0; --keep-count keeps the dead-lettered one",
	"timestamp":    "the copy keeps the message's timestamp",
	"delayMs":      "a replay publishes without a delay",
}

// CheckSetKey reports whether `dlq edit --set key=...` may set key: an
// error wrapping ErrNotSettable, saying why and which flag sets it, for
// the bag keys the replay writes itself (replayedFrom, replayedAt,
// editedAt, ...), the rejection metadata a replay strips
// (message.RejectionKeys and the pump's RejectionReason text) and the
// header fields that are not strings (id, topic, handledCount, timestamp,
// delayMs); keys are compared without case. nil for a header field
// EditHeaders takes or any other bag key.
func CheckSetKey(key string) error {
	for f, why := range headerNotSettable {
		if strings.EqualFold(f, key) {
			return fmt.Errorf("%s %w: %s", redact.Quote(key), ErrNotSettable, why)
		}
	}
	if _, ok := (&EditHeaders{}).fields()[key]; ok {
		return nil
	}
	for _, k := range replayKeys {
		if strings.EqualFold(k, key) {
			return fmt.Errorf("%s %w: it is written by the replay itself", redact.Quote(key), ErrNotSettable)
		}
	}
	for _, k := range append(message.RejectionKeys[:], message.KeyPumpRejectionReason) {
		if strings.EqualFold(k, key) {
			return fmt.Errorf("%s %w: it is rejection metadata, which a replay strips (the consumer that rejects the copy again writes its own)", redact.Quote(key), ErrNotSettable)
		}
	}
	return nil
}

// ErrNotEditable is returned (wrapped) by CheckEditedHeaders for what the
// YAML of `dlq edit --headers` must not hold.
var ErrNotEditable = errors.New("cannot be set by an edit")

// CheckEditedHeaders checks the YAML document of `dlq edit --headers`,
// decoded as a mapping (doc), before it is taken as EditHeaders: each top
// level key must be a header field EditHeaders takes, with a string (or
// empty) value, or bag, a mapping; each bag entry must be a key
// CheckSetKey allows with a string value. What is refused is what
// `--set` refuses (the rejection metadata, the replay's own bag keys, id,
// topic, handledCount, timestamp, delayMs) plus values that are not
// strings, so that the YAML cannot put into the copy what the flags
// cannot. A bag entry that orig (the bag the editor was shown, HeadersOf)
// already holds with the same value is taken as it is: the edit did not
// introduce it. It returns an error wrapping ErrNotEditable naming the
// key, or nil.
func CheckEditedHeaders(doc map[string]any, orig EditHeaders) error {
	fields := (&EditHeaders{}).fields()
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		v := doc[k]
		switch _, field := fields[k]; {
		case field:
			if _, ok := v.(string); !ok && v != nil {
				return fmt.Errorf("header %s %w with a %s value: it is a string (quote it)", redact.Quote(k), ErrNotEditable, yamlKind(v))
			}
		case k == "bag":
			if err := checkEditedBag(v, orig.Bag); err != nil {
				return err
			}
		default:
			if err := CheckSetKey(k); err != nil {
				return fmt.Errorf("header %s %w: %s", redact.Quote(k), ErrNotEditable, notSettableWhy(err))
			}
			return fmt.Errorf("header %s %w: it is not a header field (%s); a bag entry goes under the bag mapping", redact.Quote(k), ErrNotEditable, strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
	}
	return nil
}

// checkEditedBag checks the bag of an edited headers document (v, nil
// when empty) against the bag the editor was shown (orig).
func checkEditedBag(v any, orig message.Bag) error {
	if v == nil {
		return nil
	}
	bag, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("header \"bag\" %w with a %s value: it is a mapping of key: value", ErrNotEditable, yamlKind(v))
	}
	for _, k := range slices.Sorted(maps.Keys(bag)) {
		val := bag[k]
		if was, ok := orig[k]; ok && sameValue(was, val) {
			continue // shown to the editor and left as it was
		}
		if err := CheckSetKey(k); err != nil {
			return fmt.Errorf("bag key %s %w: %s", redact.Quote(k), ErrNotEditable, notSettableWhy(err))
		}
		if _, ok := val.(string); !ok {
			return fmt.Errorf("bag key %s %w with a %s value: an edit sets strings (quote it)", redact.Quote(k), ErrNotEditable, yamlKind(val))
		}
	}
	return nil
}

// notSettableWhy is the reason of a CheckSetKey error, without the key
// and the --set wording.
func notSettableWhy(err error) string {
	_, why, ok := strings.Cut(err.Error(), ErrNotSettable.Error()+": ")
	if !ok {
		return err.Error()
	}
	return why
}

// sameValue reports whether a bag value as the message held it (a JSON
// value) and as YAML decoded it are the same value (compared as JSON).
func sameValue(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// yamlKind names the kind of a decoded YAML value for an error.
func yamlKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case map[string]any:
		return "mapping"
	case []any:
		return "list"
	case string:
		return "string"
	case int, int64, uint64, float64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// Set sets key to value (`dlq edit --set key=value`): a header field when
// key names one (messageType, correlationId, contentType, ...), else the
// bag entry key (a string). A header field is named without case (an SQS
// attribute named CorrelationId is the correlationId header, and a bag
// entry of that name would not be sent): `--set CorrelationId=x` sets the
// field. A bag key is taken exactly as written, as the wire takes it (bag
// keys are case-sensitive, as in .NET Brighter's bag): `--set tenant=x`
// sets tenant and leaves an entry Tenant as it is. It refuses an empty key
// and what CheckSetKey refuses.
func (h *EditHeaders) Set(key, value string) error {
	if key == "" {
		return errors.New("an empty key: give key=value")
	}
	for name, f := range h.fields() {
		if strings.EqualFold(name, key) {
			*f = value
			return nil
		}
	}
	if err := CheckSetKey(key); err != nil {
		return err
	}
	if h.Bag == nil {
		h.Bag = message.Bag{}
	}
	h.Bag[key] = value
	return nil
}

// Check reports a header the message could not be sent with: an unknown
// or local message type.
func (h EditHeaders) Check() error {
	t, ok := message.ParseMessageType(h.MessageType)
	if !ok {
		return fmt.Errorf("messageType %s: not a message type (MT_COMMAND, MT_EVENT, MT_DOCUMENT, ...)", redact.Quote(h.MessageType))
	}
	if t.IsLocal() {
		return fmt.Errorf("messageType %s: %w", redact.Quote(h.MessageType), message.ErrLocalMessageType)
	}
	return nil
}

// IsJSON reports whether a content type names JSON (application/json, or a
// +json suffix as application/cloudevents+json).
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	}
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// ValidateBody returns an error wrapping ErrInvalidBody, with the parser's
// reason, when contentType is JSON (IsJSON) and body does not parse; any
// other content type is taken as it is.
func ValidateBody(contentType string, body []byte) error {
	if !IsJSON(contentType) {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%w (%s): %s", ErrInvalidBody, redact.Quote(contentType), err)
	}
	return nil
}

// BodySHA256 is the lowercase hex SHA-256 of body.
func BodySHA256(body []byte) string {
	s := sha256.Sum256(body)
	return hex.EncodeToString(s[:])
}

// Edit is an edited dead-lettered message: what `dlq edit` replays in
// place of the original.
type Edit struct {
	// Body is the edited body.
	Body []byte
	// Headers are the edited headers and bag; nil keeps the original's.
	Headers *EditHeaders
	// OriginalSHA256 is BodySHA256 of the body the edit started from.
	OriginalSHA256 string
	// From is HeadersOf the message the edit started from, set with
	// Headers: a copy whose own editable headers differ is not sent
	// (ErrChanged), so that an edit made on one stored copy of an id never
	// overwrites another copy's different headers. nil skips the check.
	From *EditHeaders
	// At is when the message was edited.
	At time.Time
}

// EditDiffers names what of m differs from orig for one edit to be
// applied to both (two stored copies of one id, `dlq edit`): "body" when
// the bodies differ, "headers" when headers (the edit changes the headers:
// --headers or --set) and their editable headers (HeadersOf) differ; ""
// when the edit made on orig is the edit of m too.
func EditDiffers(orig, m *message.Message, headers bool) string {
	switch {
	case !bytes.Equal(orig.Body, m.Body):
		return "body"
	case headers && !sameValue(HeadersOf(orig), HeadersOf(m)):
		return "headers"
	}
	return ""
}

// Transform is a ReplayOptions.Transform: it turns c, the replay copy of
// m, into the edited message: the edited body and (when Headers is set)
// headers and bag, with editedAt and originalBodySha256 in the bag beside
// the replay's own keys; a message with a partition key gets a fresh
// deduplication id. It returns an error wrapping ErrChanged when m's body
// is not the one the edit started from (or, with Headers and From, m's
// editable headers are not those it started from), and the headers' Check
// error.
func (e Edit) Transform(m, c *message.Message) error {
	if got := BodySHA256(m.Body); got != e.OriginalSHA256 {
		return fmt.Errorf("message %s: %w (body SHA-256 %s, edited from %s; or another stored copy of the id, with another body)", m.Header.MessageID, ErrChanged, got, e.OriginalSHA256)
	}
	if e.Headers != nil && e.From != nil && !sameValue(HeadersOf(m), *e.From) {
		return fmt.Errorf("message %s: %w (its headers or bag differ from those edited; or another stored copy of the id, with other headers)", m.Header.MessageID, ErrChanged)
	}
	if e.Headers != nil {
		h := *e.Headers
		if err := h.Check(); err != nil {
			return fmt.Errorf("message %s: %w", m.Header.MessageID, err)
		}
		t, _ := message.ParseMessageType(h.MessageType)
		keep := message.Bag{}
		for _, k := range replayKeys {
			if v, ok := c.Header.Bag[k]; ok {
				keep[k] = v
			}
		}
		bag := maps.Clone(h.Bag)
		if bag == nil {
			bag = message.Bag{}
		}
		maps.Copy(bag, keep)
		hd := &c.Header
		hd.MessageType, hd.CorrelationID, hd.ReplyTo, hd.ContentType = t, h.CorrelationID, h.ReplyTo, h.ContentType
		hd.PartitionKey, hd.Source, hd.Type, hd.SpecVersion = h.PartitionKey, h.Source, h.Type, h.SpecVersion
		hd.DataSchema, hd.Subject, hd.DataRef = h.DataSchema, h.Subject, h.DataRef
		hd.TraceParent, hd.TraceState, hd.Baggage, hd.Bag = h.TraceParent, h.TraceState, h.Baggage, bag
		if hd.PartitionKey == "" {
			delete(hd.Bag, KeyDeduplicationID)
		} else if _, ok := hd.Bag[KeyDeduplicationID]; !ok {
			hd.Bag[KeyDeduplicationID] = uuid.NewString()
		}
	}
	c.Body = append([]byte(nil), e.Body...)
	c.Header.Bag[KeyEditedAt] = e.At.UTC().Format(time.RFC3339)
	c.Header.Bag[KeyOriginalBodySHA256] = e.OriginalSHA256
	return nil
}

// EditCopiesDiffer reports what keeps one edit from being applied to
// every message of ms (the stored copies of one id, in the order read):
// "" when it fits them all; "bodies" when two bodies differ; "headers"
// when headers is set (the edit changes the headers: --headers or --set)
// and two copies' editable headers (HeadersOf) differ, with keys naming
// what differs, sorted: each header field by its name (as EditHeaders
// spells it) and each bag key as "bag." and the key, exactly as stored.
func EditCopiesDiffer(ms []*message.Message, headers bool) (what string, keys []string) {
	if len(ms) < 2 {
		return "", nil
	}
	first := ms[0]
	for _, m := range ms[1:] {
		if !bytes.Equal(first.Body, m.Body) {
			return "bodies", nil
		}
	}
	if !headers {
		return "", nil
	}
	diff := map[string]bool{}
	a := HeadersOf(first)
	fa := a.fields()
	for _, m := range ms[1:] {
		b := HeadersOf(m)
		fb := b.fields()
		for name, v := range fa {
			if *v != *fb[name] {
				diff[name] = true
			}
		}
		for k := range a.Bag {
			if v, ok := b.Bag[k]; !ok || !sameValue(a.Bag[k], v) {
				diff["bag."+k] = true
			}
		}
		for k := range b.Bag {
			if _, ok := a.Bag[k]; !ok {
				diff["bag."+k] = true
			}
		}
	}
	if len(diff) == 0 {
		return "", nil
	}
	return "headers", slices.Sorted(maps.Keys(diff))
}

package sqs

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/message"
)

// asReceived turns an encoded message into what SQS returns for it on the
// receiveCount-th receive with raw delivery.
func asReceived(out Outgoing, sqsID string, receiveCount int) types.Message {
	sm := types.Message{
		MessageId:         aws.String(sqsID),
		ReceiptHandle:     aws.String("rh-" + sqsID),
		Body:              aws.String(out.Body),
		MessageAttributes: map[string]types.MessageAttributeValue{},
		Attributes:        map[string]string{"ApproximateReceiveCount": strconv.Itoa(receiveCount), "SentTimestamp": "1700000000000"},
	}
	for k, v := range out.Attributes {
		sm.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	if out.GroupID != "" {
		sm.Attributes["MessageGroupId"] = out.GroupID
	}
	if out.DeduplicationID != "" {
		sm.Attributes["MessageDeduplicationId"] = out.DeduplicationID
	}
	return sm
}

// asEnvelope wraps an SNS-encoded message in the SNS notification JSON an
// SQS queue with RawMessageDelivery false receives.
func asEnvelope(t testing.TB, out Outgoing, topicARN string, receiveCount int) types.Message {
	t.Helper()
	attrs := map[string]map[string]string{}
	for k, v := range out.Attributes {
		attrs[k] = map[string]string{"Type": "String", "Value": v}
	}
	env, err := json.Marshal(map[string]any{"Type": "Notification", "MessageId": "sns-1", "TopicArn": topicARN, "Subject": out.Subject,
		"Message": out.Body, "Timestamp": "2026-01-01T00:00:00.000Z", "MessageAttributes": attrs})
	if err != nil {
		t.Fatal(err)
	}
	return types.Message{MessageId: aws.String("sqs-env-1"), ReceiptHandle: aws.String("rh-env"), Body: aws.String(string(env)),
		Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(receiveCount)}}
}

func sample() *message.Message {
	m := message.New("7f7c0a5e-1111-4222-8333-944445555666", "orders.created", message.MTCommand, []byte(`{"order":42}`))
	h := &m.Header
	h.Timestamp = time.Date(2026, 8, 7, 12, 46, 6, 123_000_000, time.UTC)
	h.HandledCount = 2
	h.CorrelationID = "corr-1"
	h.ReplyTo = "replies"
	h.Subject = "subj"
	h.Type = "com.example.order"
	h.DataSchema = "https://example.com/schema"
	h.DataRef = "ref-1"
	h.TraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	h.TraceState = "congo=t61rcWkgMzE"
	h.Baggage = "userId=alice"
	h.Bag = message.Bag{"tenant": "acme", "n": float64(3)}
	return m
}

func TestEncodeSQSWritesBrighterAttributeNames_R18(t *testing.T) {
	out, err := EncodeSQS(sample(), "http://127.0.0.1:1/000000000000/orders_created", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"id", "cloudeventheaders", "topic", "message-type", "content-type", "timestamp", "reply-to", "subject", "correlation-id", "bag"}
	if len(out.Attributes) != len(want) {
		t.Fatalf("attributes %v, want exactly %v", slicesKeys(out.Attributes), want)
	}
	for _, k := range want {
		if _, ok := out.Attributes[k]; !ok {
			t.Errorf("attribute %q missing", k)
		}
	}
	if out.Attributes["message-type"] != "MT_COMMAND" || out.Attributes["timestamp"] != "2026-08-07T12:46:06.123Z" {
		t.Errorf("message-type %q timestamp %q", out.Attributes["message-type"], out.Attributes["timestamp"])
	}
	var bag map[string]any
	if err := json.Unmarshal([]byte(out.Attributes["bag"]), &bag); err != nil {
		t.Fatal(err)
	}
	if bag["handled-count"] != "2" {
		t.Errorf("bag handled-count = %#v, want the string \"2\"", bag["handled-count"])
	}
	var ce map[string]string
	if err := json.Unmarshal([]byte(out.Attributes["cloudeventheaders"]), &ce); err != nil {
		t.Fatal(err)
	}
	if ce["souce"] != message.DefaultSource || ce["id"] != sample().Header.MessageID || ce["type"] != "com.example.order" {
		t.Errorf("cloudeventheaders = %v", ce)
	}
	sns, err := EncodeSNS(sample(), "arn:aws:sns:us-east-1:000000000000:orders_created", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sns.Attributes["subject"]; ok || sns.Subject != "subj" {
		t.Errorf("SNS: subject must travel as the SNS Subject, not an attribute: %v %q", slicesKeys(sns.Attributes), sns.Subject)
	}
	if strings.Contains(sns.Attributes["cloudeventheaders"], `"id"`) {
		t.Errorf("SNS cloudeventheaders carries id: %s", sns.Attributes["cloudeventheaders"])
	}
}

func slicesKeys(m map[string]string) []string {
	var ks []string
	for k := range maps.Keys(m) {
		ks = append(ks, k)
	}
	return ks
}

func TestCodecRoundTripRaw_R2(t *testing.T) {
	m := sample()
	m.Header.PartitionKey = "group-1"
	m.Header.Bag["messageDeduplicationId"] = "dedup-1"
	out, err := EncodeSQS(m, "http://127.0.0.1:1/000000000000/orders_created.fifo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.GroupID != "group-1" || out.DeduplicationID != "dedup-1" {
		t.Fatalf("FIFO ids = %q %q", out.GroupID, out.DeduplicationID)
	}
	got, err := Decode(asReceived(out, "sqs-1", 1), DecodeOptions{DefaultTopic: "q"})
	if err != nil {
		t.Fatal(err)
	}
	assertSameHeader(t, m, got)
	if got.Header.Topic != "orders_created.fifo" {
		t.Errorf("topic %q, want the queue name from the URL", got.Header.Topic)
	}
	if got.Receipt != "rh-sqs-1" || got.DeliveryAttempt != 1 {
		t.Errorf("receipt %v attempt %d", got.Receipt, got.DeliveryAttempt)
	}
	if _, ok := got.Header.Bag[BagReceiptHandle]; ok {
		t.Error("receipt handle leaked into the bag")
	}
}

func assertSameHeader(t *testing.T, want, got *message.Message) {
	t.Helper()
	w, g := want.Header, got.Header
	if g.MessageID != w.MessageID || g.MessageType != w.MessageType || g.HandledCount != w.HandledCount ||
		!g.Timestamp.Equal(w.Timestamp) || g.CorrelationID != w.CorrelationID || g.ReplyTo != w.ReplyTo ||
		g.ContentType != w.ContentType || g.PartitionKey != w.PartitionKey || g.Subject != w.Subject ||
		g.Source != w.Source || g.Type != w.Type || g.SpecVersion != w.SpecVersion || g.DataSchema != w.DataSchema ||
		g.DataRef != w.DataRef || g.TraceParent != w.TraceParent || g.TraceState != w.TraceState || g.Baggage != w.Baggage {
		t.Errorf("header differs:\n got %+v\nwant %+v", g, w)
	}
	if !maps.Equal(g.Bag, w.Bag) {
		t.Errorf("bag = %v, want %v", g.Bag, w.Bag)
	}
	if string(got.Body) != string(want.Body) {
		t.Errorf("body = %q, want %q", got.Body, want.Body)
	}
}

func TestDecodePresentsStampedPlusReceiveCountMinusOne_R1_R2_R3(t *testing.T) {
	m := sample()
	m.Header.HandledCount = 0
	out, _ := EncodeSQS(m, "u/q", nil)
	for attempt, want := range map[int]int{0: 0, 1: 0, 2: 1, 3: 2, 7: 6} {
		got, err := Decode(asReceived(out, "x", attempt), DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Header.HandledCount != want {
			t.Errorf("ApproximateReceiveCount %d: presented %d, want %d", attempt, got.Header.HandledCount, want)
		}
	}
}

func TestDecodeRoutedCopyPresentsStampedCountOnly_R28(t *testing.T) {
	m := message.Stamp(sample(), "dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "budget"}, time.Now())
	m.Header.HandledCount = 3
	out, _ := EncodeSQS(m, "u/dlq", nil)
	for _, attempt := range []int{1, 2, 5} {
		got, err := Decode(asReceived(out, "x", attempt), DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Header.HandledCount != 3 {
			t.Errorf("DLQ receive %d presented %d, want the stamped 3", attempt, got.Header.HandledCount)
		}
		for _, k := range message.RejectionKeys {
			if _, ok := got.Header.Bag[k]; !ok {
				t.Errorf("key %s lost", k)
			}
		}
	}
}

func TestDecodeEnvelopeReadsHandledCountFromBag_R1(t *testing.T) {
	m := sample()
	m.Header.HandledCount = 4
	out, err := EncodeSNS(m, "arn:aws:sns:us-east-1:000000000000:orders_created", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(asEnvelope(t, out, "arn:aws:sns:us-east-1:000000000000:orders_created", 2), DecodeOptions{Envelope: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.HandledCount != 5 {
		t.Errorf("presented %d, want 4 stamped + 2 - 1 = 5 (Brighter's envelope reader would say 0)", got.Header.HandledCount)
	}
	if got.Header.Topic != "orders_created" || got.Header.Subject != "subj" || string(got.Body) != `{"order":42}` || got.Header.MessageID != m.Header.MessageID {
		t.Errorf("envelope decode: topic %q subject %q body %q id %q", got.Header.Topic, got.Header.Subject, got.Body, got.Header.MessageID)
	}
	if got.Receipt != "rh-env" {
		t.Errorf("receipt %v", got.Receipt)
	}
}

func TestDecodeNonBrighterMessageDefaults_R23(t *testing.T) {
	sm := types.Message{MessageId: aws.String("aws-id-1"), ReceiptHandle: aws.String("rh"), Body: aws.String("hello"),
		Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1700000000000"}}
	got, err := Decode(sm, DecodeOptions{DefaultTopic: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.MessageID != "aws-id-1" || got.Header.MessageType != message.MTEvent || got.Header.Topic != "plain" ||
		got.Header.HandledCount != 0 || string(got.Body) != "hello" || !got.Header.Timestamp.Equal(time.UnixMilli(1700000000000)) {
		t.Errorf("non-Brighter decode = %+v body %q", got.Header, got.Body)
	}
}

func TestDecodeSurfacesForeignAttributesInBag(t *testing.T) {
	sm := types.Message{MessageId: aws.String("a"), Body: aws.String("x"), MessageAttributes: map[string]types.MessageAttributeValue{
		"tenant": {DataType: aws.String("String"), StringValue: aws.String("acme")}}}
	got, err := Decode(sm, DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Bag["tenant"] != "acme" {
		t.Errorf("bag %v", got.Header.Bag)
	}
}

func TestDecodeUndecodableIsUnacceptableWithReceipt_R16(t *testing.T) {
	cases := map[string]types.Message{
		"envelope not JSON": {MessageId: aws.String("e1"), ReceiptHandle: aws.String("rh1"), Body: aws.String("not json{"),
			Attributes: map[string]string{"ApproximateReceiveCount": "2"}},
		"bag not an object": {MessageId: aws.String("e2"), ReceiptHandle: aws.String("rh2"), Body: aws.String("b"),
			MessageAttributes: map[string]types.MessageAttributeValue{"bag": {DataType: aws.String("String"), StringValue: aws.String(`[1,2]`)}}},
		"bag null": {MessageId: aws.String("e3"), ReceiptHandle: aws.String("rh3"), Body: aws.String("b"),
			MessageAttributes: map[string]types.MessageAttributeValue{"bag": {DataType: aws.String("String"), StringValue: aws.String(`null`)}}},
		"gzip body not base64": {MessageId: aws.String("e4"), ReceiptHandle: aws.String("rh4"), Body: aws.String("%%%"),
			MessageAttributes: map[string]types.MessageAttributeValue{"content-type": {DataType: aws.String("String"), StringValue: aws.String("application/gzip")}}},
		// a hostile producer's MT_QUIT must be routed, never stop the pump
		"local message type": {MessageId: aws.String("e5"), ReceiptHandle: aws.String("rh5"), Body: aws.String("b"),
			MessageAttributes: map[string]types.MessageAttributeValue{"message-type": {DataType: aws.String("String"), StringValue: aws.String("MT_QUIT")}}},
	}
	for name, sm := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Decode(sm, DecodeOptions{Envelope: name == "envelope not JSON", DefaultTopic: "q"})
			if !errors.Is(err, ErrUndecodable) {
				t.Fatalf("error %v, want ErrUndecodable", err)
			}
			if got == nil || got.Header.MessageType != message.MTUnacceptable || got.Receipt != aws.ToString(sm.ReceiptHandle) ||
				got.Header.MessageID != aws.ToString(sm.MessageId) || string(got.Body) != aws.ToString(sm.Body) {
				t.Errorf("got %+v receipt %v body %q", got, got.Receipt, got.Body)
			}
		})
	}
}

func TestEncodeFailsOverTenAttributes(t *testing.T) {
	m := sample() // already 10 attributes with reply-to, subject and correlation id
	_, err := EncodeSQS(m, "u/q", map[string]string{"extra": "1"})
	if !errors.Is(err, ErrTooManyAttributes) || !strings.Contains(err.Error(), "11 message attributes") {
		t.Fatalf("err = %v, want ErrTooManyAttributes naming 11", err)
	}
	m.Header.Subject, m.Header.ReplyTo = "", ""
	if _, err := EncodeSQS(m, "u/q", map[string]string{"extra": "1"}); err != nil {
		t.Fatalf("9 attributes refused: %v", err)
	}
	if _, err := EncodeSQS(m, "u/q", map[string]string{"bag": "1"}); err == nil {
		t.Fatal("an extra attribute named like a Brighter one was accepted")
	}
}

func TestEncodeStripsReceiptAndLocalKeysAndCapsDelay(t *testing.T) {
	m := sample()
	m.Header.Bag[BagReceiptHandle] = "secret"
	m.Header.Bag[bagProducerTopic] = "local"
	m.Header.Delay = 20 * time.Minute
	out, err := EncodeSQS(m, "u/q", nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.Attributes["bag"], "secret") || strings.Contains(out.Attributes["bag"], "local") {
		t.Errorf("bag %s", out.Attributes["bag"])
	}
	if out.DelaySeconds != 900 {
		t.Errorf("delay %d, want capped at 900", out.DelaySeconds)
	}
}

func TestCompressedBodyTravelsAsBase64(t *testing.T) {
	m := sample()
	m.Header.ContentType = "application/gzip"
	m.Body = []byte{0x1f, 0x8b, 0x00, 0xff}
	out, err := EncodeSQS(m, "u/q", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(asReceived(out, "x", 1), DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Body) != string(m.Body) {
		t.Errorf("body %v, want %v", got.Body, m.Body)
	}
}

// TestQueueAndTopicNames_DotsBecomeUnderscoresAndAreNeverCut: QueueName
// turns dots into underscores and appends .fifo for a FIFO queue (once);
// neither QueueName nor TopicName cuts a long name (SQS refuses it rather
// than another queue being used); an ARN gives its topic name.
func TestQueueAndTopicNames_DotsBecomeUnderscoresAndAreNeverCut(t *testing.T) {
	long := strings.Repeat("a", 100)
	for _, c := range []struct {
		in   string
		fifo bool
		want string
	}{
		{"orders.created", false, "orders_created"},
		{"orders.created", true, "orders_created.fifo"},
		{"orders.fifo", true, "orders.fifo"},
		{long, false, long},          // never cut: SQS refuses it, not another queue
		{long, true, long + ".fifo"}, // the same
	} {
		if got := QueueName(c.in, c.fifo); got != c.want {
			t.Errorf("QueueName(%q, %v) = %q, want %q", c.in, c.fifo, got, c.want)
		}
	}
	if got := TopicName(long, false); got != long {
		t.Errorf("TopicName kept %d of 100 characters", len(got))
	}
	if got := topicName("arn:aws:sns:us-east-1:000000000000:t_1"); got != "t_1" {
		t.Errorf("topicName(arn) = %q", got)
	}
}

func TestReceiveCountReadsSystemAttribute_AC33(t *testing.T) {
	for in, want := range map[string]int{"": 0, "1": 1, "3": 3, "x": 0, "-2": 0} {
		if got := receiveCount(map[string]string{"ApproximateReceiveCount": in}); got != want {
			t.Errorf("receiveCount(%q) = %d, want %d", in, got, want)
		}
	}
	for in, want := range map[any]int{"4": 4, float64(2): 2, "": 0} {
		if got, _, err := stampedCount(message.Bag{BagHandledCount: in}); got != want || err != nil {
			t.Errorf("stampedCount(%v) = %d, %v, want %d", in, got, err, want)
		}
	}
	// A junk stamp is an error (the message is Unacceptable), never 0.
	for _, in := range []any{"x", nil, "-1", float64(-1), 2.5, "9223372036854775807", "1000000", true, []any{}} {
		if _, _, err := stampedCount(message.Bag{BagHandledCount: in}); !errors.Is(err, message.ErrBadHandledCount) {
			t.Errorf("stampedCount(%#v) err = %v, want ErrBadHandledCount", in, err)
		}
	}
}

// FuzzDecode feeds arbitrary bodies and attribute values to Decode: it must
// never panic, always return a message, and return ErrUndecodable (with an
// MT_UNACCEPTABLE message) whenever it returns an error. The seeds run in
// every normal `go test`.
func FuzzDecode(f *testing.F) {
	out, _ := EncodeSQS(sample(), "u/q", nil)
	f.Add(out.Body, out.Attributes["bag"], out.Attributes["cloudeventheaders"], "2", false)
	f.Add("not json{", "", "", "1", true)
	f.Add(`{"Type":"Notification","Message":"x","MessageAttributes":{"bag":{"Type":"String","Value":"[]"}}}`, "", "", "1", true)
	f.Add("x", `{"handled-count":"-5"}`, `{bad`, "-1", false)
	f.Add("x", `"string"`, "", "", false)
	f.Fuzz(func(t *testing.T, body, bag, ce, count string, envelope bool) {
		sm := types.Message{MessageId: aws.String("f"), ReceiptHandle: aws.String("rh"), Body: aws.String(body),
			Attributes: map[string]string{"ApproximateReceiveCount": count}}
		if bag != "" || ce != "" {
			sm.MessageAttributes = map[string]types.MessageAttributeValue{
				"bag":               {DataType: aws.String("String"), StringValue: aws.String(bag)},
				"cloudeventheaders": {DataType: aws.String("String"), StringValue: aws.String(ce)},
			}
		}
		m, err := Decode(sm, DecodeOptions{Envelope: envelope})
		if m == nil {
			t.Fatal("nil message")
		}
		if m.Receipt != "rh" || m.Header.HandledCount < 0 {
			t.Fatalf("receipt %v count %d", m.Receipt, m.Header.HandledCount)
		}
		if err != nil && (!errors.Is(err, ErrUndecodable) || m.Header.MessageType != message.MTUnacceptable) {
			t.Fatalf("err %v type %v", err, m.Header.MessageType)
		}
	})
}

func TestEncodeRefusesBodiesSQSCannotCarry(t *testing.T) {
	for name, body := range map[string][]byte{"empty": nil, "binary": {0xff, 0xfe, 0x00}} {
		m := message.New("id-"+name, "q", message.MTEvent, body)
		if _, err := EncodeSQS(m, "url", nil); !errors.Is(err, ErrBodyNotText) {
			t.Errorf("%s body: err = %v, want ErrBodyNotText", name, err)
		}
	}
	gz := message.New("id-gz", "q", message.MTEvent, []byte{0x1f, 0x8b, 0xff})
	gz.Header.ContentType = "application/gzip"
	if _, err := EncodeSQS(gz, "url", nil); err != nil {
		t.Errorf("compressed binary body: %v", err)
	}
}

// Decode reads the attribute map in one pass and keeps the bag's stamped
// count aside on the flat-JSON path; what it presents is what reading each
// attribute by name gave: a readable stamped count leaves the bag, an
// unreadable one stays in it as it came (on either JSON path), a bag
// member wins over a foreign attribute of the same name, a foreign binary
// attribute is surfaced in base64, and Brighter's own attributes that
// decode does not read (dataref, traceparent, messageDeduplicationId) are
// never surfaced in the bag.
func TestDecodeAttributesAndStampedCountInOnePass(t *testing.T) {
	str := func(v string) types.MessageAttributeValue {
		return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	cases := []struct {
		name      string
		bag       string
		wantBag   message.Bag
		wantCount int
		wantErr   bool
	}{
		{"flat, readable count", `{"handled-count":"2","tenant":"from-bag"}`, message.Bag{"tenant": "from-bag"}, 2 + 3 - 1, false},
		{"flat, empty count", `{"handled-count":"","tenant":"from-bag"}`, message.Bag{"tenant": "from-bag"}, 3 - 1, false},
		{"flat, unreadable count", `{"handled-count":"three","tenant":"from-bag"}`, message.Bag{"handled-count": "three", "tenant": "from-bag"}, 3 - 1, true},
		{"flat, last of a repeated count", `{"handled-count":"x","handled-count":"4"}`, message.Bag{}, 4 + 3 - 1, false},
		{"encoding/json, number count", `{"handled-count":5,"n":1}`, message.Bag{"n": float64(1)}, 5 + 3 - 1, false},
		{"encoding/json, unreadable count", `{"handled-count":true,"tenant":"from-bag"}`, message.Bag{"handled-count": true, "tenant": "from-bag"}, 3 - 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sm := types.Message{MessageId: aws.String("sqs-1"), ReceiptHandle: aws.String("rh"), Body: aws.String("b"),
				Attributes: map[string]string{"ApproximateReceiveCount": "3"},
				MessageAttributes: map[string]types.MessageAttributeValue{
					AttrBag:                    str(c.bag),
					"tenant":                   str("from-attribute"),
					"blob":                     {DataType: aws.String("Binary"), BinaryValue: []byte{0xff, 0x00, 0x01}},
					AttrDataRef:                str("ref"),
					AttrTraceParent:            str("00-abc-def-01"),
					AttrMessageDeduplicationID: str("dedup-attr"),
				}}
			got, err := Decode(sm, DecodeOptions{DefaultTopic: "q"})
			if (err != nil) != c.wantErr || (got.Header.MessageType == message.MTUnacceptable) != c.wantErr {
				t.Fatalf("error %v, type %v, want an error: %v", err, got.Header.MessageType, c.wantErr)
			}
			want := message.Bag{"blob": "/wAB"}
			for k, v := range c.wantBag {
				want[k] = v
			}
			if _, ok := want["tenant"]; !ok {
				want["tenant"] = "from-attribute"
			}
			if !reflect.DeepEqual(got.Header.Bag, want) {
				t.Errorf("bag %#v, want %#v", got.Header.Bag, want)
			}
			if !c.wantErr && got.Header.HandledCount != c.wantCount {
				t.Errorf("presented count %d, want %d", got.Header.HandledCount, c.wantCount)
			}
			if got.Header.DataRef != "" || got.Header.TraceParent != "" {
				t.Errorf("dataref %q traceparent %q read from top-level attributes, want only cloudeventheaders' members", got.Header.DataRef, got.Header.TraceParent)
			}
		})
	}
}

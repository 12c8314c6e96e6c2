package sqs

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/message"
)

// ceReceived is a raw SQS message whose only Brighter attribute is a
// cloudeventheaders of text ce.
func ceReceived(ce string) types.Message {
	return types.Message{MessageId: aws.String("ce-1"), ReceiptHandle: aws.String("rh-ce-1"), Body: aws.String("{}"),
		Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		MessageAttributes: map[string]types.MessageAttributeValue{
			AttrCloudEventHeaders: {DataType: aws.String("String"), StringValue: aws.String(ce)},
		}}
}

// The cloudeventheaders decode reads whether the fast path or
// encoding/json takes it: keys are matched as they are ("Type" is not
// "type"), the last of a repeated key wins, an escaped value is unescaped,
// a member that is not a string is skipped, and a malformed header is
// swallowed whole, as Brighter swallows it, even when its first members
// were well formed.
func TestCloudEventHeadersReadTheSameOnEitherPath(t *testing.T) {
	for _, tc := range []struct {
		name, ce            string
		typ, source, schema string
	}{
		{"flat", `{"type":"t","souce":"s","dataschema":"d"}`, "t", "s", "d"},
		{"keys as they are", `{"Type":"upper","type":"lower","Souce":"x"}`, "lower", message.DefaultSource, ""},
		{"last of a repeated key", `{"type":"a","type":"b"}`, "b", message.DefaultSource, ""},
		{"escaped", `{"type":"a\"b","souce":"caf\u00e9"}`, `a"b`, "café", ""},
		{"member not a string", `{"type":"t","dataschema":3,"souce":"s"}`, "t", "s", ""},
		{"malformed after well-formed members", `{"type":"t","souce":"s",`, "", message.DefaultSource, ""},
		{"trailing text", `{"type":"t"} x`, "", message.DefaultSource, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode(ceReceived(tc.ce), DecodeOptions{DefaultTopic: "q"})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			h := m.Header
			if h.Type != tc.typ || h.Source != tc.source || h.DataSchema != tc.schema {
				t.Errorf("cloudeventheaders %s: type %q, source %q, dataschema %q; want %q, %q, %q", tc.ce, h.Type, h.Source, h.DataSchema, tc.typ, tc.source, tc.schema)
			}
		})
	}
}

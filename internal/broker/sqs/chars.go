package sqs

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/brightergo/brighter/internal/broker"
)

// ErrInvalidChars is wrapped (with broker.ErrPermanent) by a send SQS
// refused with InvalidMessageContents: the body or an attribute value
// holds a character SQS does not take.
var ErrInvalidChars = errors.New("SQS refused the message's characters (InvalidMessageContents)")

// sqsChars is the characters SQS takes in a body and in attribute values.
const sqsChars = "SQS takes #x9, #xA, #xD, #x20 to #xD7FF, #xE000 to #xFFFD and #x10000 to #x10FFFF"

// codeInvalidChars is the error code of SQS's refusal of a message's
// characters.
const codeInvalidChars = "InvalidMessageContents"

// refusedChars returns, for err, SendMessage's error, nil unless SQS
// refused the message for its characters (InvalidMessageContents), and then
// charsRefusal for body, the body as sent.
func refusedChars(body string, err error) error {
	var api smithy.APIError
	if !errors.As(err, &api) || strings.TrimPrefix(api.ErrorCode(), "AWS.SimpleQueueService.") != codeInvalidChars {
		return nil
	}
	return charsRefusal(body)
}

// charsRefusal is SQS's refusal of the characters of a message whose body
// as sent is body, said in words (its first character SQS does not take,
// or, when AWS takes every one, that it holds characters above U+FFFF,
// which an emulator such as fauxqs refuses) instead of the broker's HTTP
// answer; it wraps broker.ErrPermanent and ErrInvalidChars.
func charsRefusal(body string) error {
	return fmt.Errorf("%w: %w: %s; %s", broker.ErrPermanent, ErrInvalidChars, charsWhy(body), sqsChars)
}

// charsWhy says which character of body SQS would not take, or that body
// holds characters above U+FFFF (all taken by AWS, refused by fauxqs),
// or, when neither, that the refused character is in an attribute value.
func charsWhy(body string) string {
	above := -1
	for i := 0; i < len(body); {
		r, n := utf8.DecodeRuneInString(body[i:])
		if !takenBySQS(r) || r == utf8.RuneError && n <= 1 {
			return fmt.Sprintf("the body holds %U at byte %d", r, i)
		}
		if r > 0xFFFF && above < 0 {
			above = i
		}
		i += n
	}
	if above >= 0 {
		r, _ := utf8.DecodeRuneInString(body[above:])
		return fmt.Sprintf("the body holds characters above U+FFFF (%U at byte %d), which AWS takes but an emulator may refuse (fauxqs does)", r, above)
	}
	return "the body's characters are all valid, so an attribute value holds one that is not"
}

// checkChars returns, for in, a SendMessage request, the refusal SQS
// would answer it with for its characters (charsRefusal, in the same
// words), without any call: when its body or an attribute value holds a
// character SQS does not take (takenBySQS, or bytes that are not UTF-8);
// nil otherwise. Characters above U+FFFF pass: AWS takes them.
func checkChars(in *sqs.SendMessageInput) error {
	body := aws.ToString(in.MessageBody)
	bad := !allTakenBySQS(body)
	for _, v := range in.MessageAttributes {
		bad = bad || !allTakenBySQS(aws.ToString(v.StringValue))
	}
	if bad {
		return charsRefusal(body)
	}
	return nil
}

// allTakenBySQS reports whether s is UTF-8 and SQS takes each of its
// characters.
func allTakenBySQS(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !takenBySQS(r) || r == utf8.RuneError && n <= 1 {
			return false
		}
		i += n
	}
	return true
}

// takenBySQS reports whether SQS takes r in a message.
func takenBySQS(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

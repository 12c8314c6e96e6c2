package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// TestErrors_QuoteExpandedValuesAsWritten: a value that came out of
// ${VAR} expansion and fails validation is quoted as written, never
// expanded, in every field kind (string/URL, enum, integer, duration,
// boolean, name).
func TestErrors_QuoteExpandedValuesAsWritten(t *testing.T) {
	const secret = "SeKrEt-value-29"
	env := noEnv("S", secret)
	cases := map[string]string{
		"url":      "subscriptions:\n  - name: a\n    transport: memory\n    handler: {type: http, url: \"ftp://${S}/x\"}\n",
		"enum":     "subscriptions:\n  - name: a\n    transport: memory\n    messagePumpType: \"${S}\"\n    handler: {type: builtin, name: ack}\n",
		"integer":  "subscriptions:\n  - name: a\n    transport: memory\n    bufferSize: \"${S}\"\n    handler: {type: builtin, name: ack}\n",
		"duration": "subscriptions:\n  - name: a\n    transport: memory\n    requeueDelay: \"${S}\"\n    handler: {type: builtin, name: ack}\n",
		"boolean":  "subscriptions:\n  - name: a\n    transport: sqs\n    sqs: {rawMessageDelivery: \"${S}\"}\n    handler: {type: builtin, name: ack}\n",
		"name":     "subscriptions:\n  - name: a\n    transport: sqs\n    channelName: \"${S}/bad name\"\n    handler: {type: builtin, name: ack}\n",
		"range":    "subscriptions:\n  - name: a\n    transport: memory\n    bufferSize: \"${N}\"\n    handler: {type: builtin, name: ack}\n",
		// A value longer than redact.MaxQuoted: its quoted form is cut, so
		// only quoting it as written keeps it out.
		"long": "subscriptions:\n  - name: a\n    transport: memory\n    bufferSize: \"${L}\"\n    handler: {type: builtin, name: ack}\n",
	}
	for kind, src := range cases {
		t.Run(kind, func(t *testing.T) {
			e := env
			switch kind {
			case "range":
				e = noEnv("N", "99999999")
			case "long":
				e = noEnv("L", strings.Repeat(secret, 20))
			}
			_, err := config.Parse("test.yaml", []byte(src), e)
			var es config.Errors
			if !errors.As(err, &es) {
				t.Fatalf("want config errors, got %v", err)
			}
			text := err.Error()
			if strings.Contains(text, secret) || strings.Contains(text, "99999999") {
				t.Fatalf("an expanded value is in the error: %s", text)
			}
			if !strings.Contains(text, "${") {
				t.Fatalf("the value as written is not in the error: %s", text)
			}
		})
	}
}

// TestErrors_LongValuesAreCut: a 200 KB key gives an error line of
// a bounded size that shows the key's length in bytes.
func TestErrors_LongValuesAreCut(t *testing.T) {
	key := strings.Repeat("k", 200_000)
	for _, src := range []string{
		"subscriptions:\n  - name: a\n    transport: memory\n    " + key + ": 1\n    handler: {type: builtin, name: ack}\n",
		"subscriptions:\n  - name: a\n    transport: memory\n    messagePumpType: " + key + "\n    handler: {type: builtin, name: ack}\n",
		"subscriptions:\n  - name: a\n    transport: memory\n    handler: {type: http, url: \"ftp://" + key + "\"}\n",
	} {
		errs := errorTexts(t, src)
		for _, e := range errs {
			if len(e) > 2000 {
				t.Fatalf("error line is %d bytes: %.300s", len(e), e)
			}
		}
		if !strings.Contains(strings.Join(errs, "\n"), "bytes)") {
			t.Fatalf("no length shown: %v", errs)
		}
	}
}

// TestAsWritten_ReplacesQuotedExpandedValues: findings about a
// subscription quote its values as written.
func TestAsWritten_ReplacesQuotedExpandedValues(t *testing.T) {
	f := mustParse(t, "test.yaml", "subscriptions:\n  - name: a\n    transport: memory\n    deadLetterRoutingKey: \"${DLQ}\"\n    handler: {type: builtin, name: ack}\n", noEnv("DLQ", "orders-dlq-secret"))
	got := f.Subscriptions[0].AsWritten(`deadLetterRoutingKey "orders-dlq-secret" is bad`)
	if got != `deadLetterRoutingKey "${DLQ}" is bad` {
		t.Fatalf("AsWritten = %s", got)
	}
	if f.AsWritten(`x "orders-dlq-secret"`) != `x "${DLQ}"` {
		t.Fatalf("File.AsWritten did not replace")
	}
}

// TestErrors_OnlyTheNodesOwnValueIsShownAsWritten: an error shows the
// offending value as written only when that value came out of ${VAR}
// expansion. A plain value that equals what another field's ${VAR}
// expanded to is shown as the file has it, and what is not a value of the
// file (an empty "did you mean", a list of valid values) is never replaced
// by another field's ${VAR} text.
func TestErrors_OnlyTheNodesOwnValueIsShownAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown transport beside a variable that expands to nothing",
			"connections:\n  aws:\n    endpoint: ${BRIGHTER_AWS_ENDPOINT:-}\nsubscriptions:\n  - name: a\n    transport: kafka\n    handler: {type: builtin, name: ack}\n",
			[]string{`test.yaml:6:16: subscriptions[0].transport: unknown transport "kafka"; valid values are sqs, gcp, rocketmq, memory`}},
		{"unknown builtin handler beside a variable that expands to nothing",
			"subscriptions:\n  - name: a\n    transport: memory\n    invalidMessageRoutingKey: ${FOO:-}\n    handler: {type: builtin, name: nope}\n",
			[]string{`test.yaml:5:36: subscriptions[0].handler.name: unknown builtin handler "nope"; valid values are log, ack, defer, reject, fail, unacceptable`}},
		{"a plain value equal to another field's expanded value",
			"connections:\n  aws:\n    region: ${AWS_REGION:-us-east-1}\nsubscriptions:\n  - name: a\n    transport: sqs\n    messagePumpType: us-east-1\n    handler: {type: builtin, name: ack}\n",
			[]string{`test.yaml:7:22: subscriptions[0].messagePumpType: unknown messagePumpType "us-east-1"; valid values are reactor, proactor`}},
		{"a plain name equal to another subscription's expanded name",
			"subscriptions:\n  - name: a\n    transport: sqs\n    channelName: ${Q:-bad name}\n    handler: {type: builtin, name: ack}\n  - name: b\n    transport: sqs\n    channelName: bad name\n    handler: {type: builtin, name: ack}\n",
			[]string{
				`test.yaml:4:5: subscriptions[0].channelName: "${Q:-bad name}": an SQS queue name may hold only letters, digits, '-', '_' and '.' (which becomes '_'); ' ' is not allowed`,
				`test.yaml:8:5: subscriptions[1].channelName: "bad name": an SQS queue name may hold only letters, digits, '-', '_' and '.' (which becomes '_'); ' ' is not allowed`,
			}},
		{"the offending node's own expanded value",
			"subscriptions:\n  - name: a\n    transport: memory\n    messagePumpType: ${PUMP:-proactr}\n    handler: {type: builtin, name: ack}\n",
			[]string{`test.yaml:4:22: subscriptions[0].messagePumpType: unknown messagePumpType the value of "${PUMP:-proactr}" (not shown: environment values may be secrets) (did you mean "proactor"?); valid values are reactor, proactor`}},
		{"a script item from a variable",
			"subscriptions:\n  - name: a\n    transport: memory\n    handler: {type: builtin, script: \"${S:-defer,n0pe-s3cret}\"}\n",
			[]string{`test.yaml:4:38: subscriptions[0].handler.script: item 2 of the value of "${S:-defer,n0pe-s3cret}" (not shown: environment values may be secrets) is not a builtin outcome; valid values are log, ack, defer, reject, fail, unacceptable`}},
		{"a script list item from a variable",
			"subscriptions:\n  - name: a\n    transport: memory\n    handler: {type: builtin, script: [ack, \"${S:-n0pe}\"]}\n",
			[]string{`test.yaml:4:38: subscriptions[0].handler.script: item 2 of the value of "${S:-n0pe}" (not shown: environment values may be secrets) is not a builtin outcome; valid values are log, ack, defer, reject, fail, unacceptable`}},
		{"a transport's range checked after the field was read",
			"subscriptions:\n  - name: a\n    transport: sqs\n    requeueDelay: ${D:-13h}\n    handler: {type: builtin, name: ack}\n",
			[]string{`test.yaml:4:19: subscriptions[0].requeueDelay: the value of "${D:-13h}" (not shown: environment values may be secrets) is out of range; valid values are 0s..12h for sqs (the visibility timeout maximum)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorTexts(t, tc.yaml); !slices.Equal(got, tc.want) {
				t.Fatalf("errors\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestAsWritten_OnlyTheSubscriptionsOwnValues: findings about a
// subscription replace only what its own fields' ${VAR}s expanded to, never
// another subscription's or a connection's, nor an empty quoted value.
func TestAsWritten_OnlyTheSubscriptionsOwnValues(t *testing.T) {
	f := mustParse(t, "test.yaml", "connections:\n  aws:\n    region: ${AWS_REGION:-us-east-1}\n    endpoint: ${E:-}\n"+
		"subscriptions:\n  - name: a\n    transport: sqs\n    deadLetterRoutingKey: \"${DLQ:-orders-dlq}\"\n    invalidMessageRoutingKey: ${I:-}\n    handler: {type: builtin, name: ack}\n"+
		"  - name: b\n    transport: sqs\n    deadLetterRoutingKey: orders-dlq\n    handler: {type: builtin, name: ack}\n", noEnv())
	const text = `deadLetterRoutingKey "orders-dlq" in "us-east-1", ""`
	if got, want := f.Subscriptions[0].AsWritten(text), `deadLetterRoutingKey "${DLQ:-orders-dlq}" in "us-east-1", ""`; got != want {
		t.Errorf("subscription a: AsWritten = %s, want %s", got, want)
	}
	if got := f.Subscriptions[1].AsWritten(text); got != text {
		t.Errorf("subscription b: AsWritten = %s, want it unchanged", got)
	}
}

package config_test

import (
	"errors"
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

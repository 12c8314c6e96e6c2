package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// noEnv is an environment in which only the given variables are set.
func noEnv(vars ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(vars); i += 2 {
		m[vars[i]] = vars[i+1]
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// errorTexts parses src as "test.yaml" and returns each error's text; it
// fails the test when Parse succeeds or returns something other than Errors.
func errorTexts(t *testing.T, src string) []string {
	t.Helper()
	f, err := config.Parse("test.yaml", []byte(src), noEnv())
	if err == nil {
		t.Fatalf("Parse succeeded, want errors; got %d subscriptions", len(f.Subscriptions))
	}
	if f != nil {
		t.Errorf("Parse returned a file along with an error")
	}
	var es config.Errors
	if !errors.As(err, &es) {
		t.Fatalf("error is %T, want config.Errors: %v", err, err)
	}
	if len(es) == 0 {
		t.Fatalf("Errors is empty")
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Error()
	}
	if got, want := err.Error(), strings.Join(out, "\n"); got != want {
		t.Errorf("Errors.Error() = %q, want the errors joined by newlines %q", got, want)
	}
	return out
}

// TestParse_BrokenFiles asserts the exact "file:line:col: field: message" of
// each kind of configuration error, so an operator can go straight to the
// line and field at fault (docs/configuration.md).
func TestParse_BrokenFiles(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "yaml syntax",
			src: `subscriptions:
  - name: a
    transport: [sqs
`,
			want: []string{`test.yaml:3:16: YAML syntax error: sequence end token ']' not found`},
		},
		{
			name: "empty file",
			src:  "# nothing here\n",
			want: []string{`test.yaml:1:1: the file is empty; it needs a subscriptions list (see examples/)`},
		},
		{
			name: "unknown top-level field",
			src: `subscription:
  - name: a
`,
			want: []string{
				`test.yaml:1:1: subscription: unknown field "subscription"; did you mean "subscriptions"?`,
				`test.yaml:1:1: subscriptions: required field is missing; list at least one subscription`,
			},
		},
		{
			name: "unknown field with suggestion",
			src: `subscriptions:
  - name: a
    transport: memory
    bufersize: 2
    handler: {type: builtin, name: ack}
`,
			want: []string{`test.yaml:4:5: subscriptions[0].bufersize: unknown field "bufersize"; did you mean "bufferSize"?`},
		},
		{
			name: "unknown field without suggestion",
			src: `subscriptions:
  - name: a
    transport: memory
    handler: {type: builtin, name: ack, colour: blue}
`,
			want: []string{`test.yaml:4:41: subscriptions[0].handler.colour: unknown field "colour"; valid fields are type, timeout, name, script, command, args, env, url, headers, tls`},
		},
		{
			name: "requeueCount three",
			src: `subscriptions:
  - name: a
    transport: memory
    requeueCount: "three"
    handler: {type: builtin, name: ack}
`,
			want: []string{`test.yaml:4:19: subscriptions[0].requeueCount: must be an integer, got "three"`},
		},
		{
			name: "bufferSize 11",
			src: `subscriptions:
  - name: a
    transport: memory
    bufferSize: 11
    handler: {type: builtin, name: ack}
`,
			want: []string{`test.yaml:4:17: subscriptions[0].bufferSize: 11 is out of range; valid values are 1..10`},
		},
		{
			name: "noOfPerformers 0 and negative limit",
			src: `subscriptions:
  - name: a
    transport: memory
    noOfPerformers: 0
    unacceptableMessageLimit: -1
    handler: {type: builtin, name: ack}
`,
			want: []string{
				`test.yaml:4:21: subscriptions[0].noOfPerformers: 0 is out of range; valid values are 1..1000`,
				`test.yaml:5:31: subscriptions[0].unacceptableMessageLimit: -1 is out of range; valid values are >= 0`,
			},
		},
		{
			name: "noOfPerformers 100000000 (hostile: gigabytes before the first message)",
			src: `subscriptions:
  - name: a
    transport: memory
    noOfPerformers: 100000000
    handler: {type: builtin, name: ack}
`,
			want: []string{`test.yaml:4:21: subscriptions[0].noOfPerformers: 100000000 is out of range; valid values are 1..1000`},
		},
		{
			name: "bad enums",
			src: `subscriptions:
  - name: a
    transport: memory
    messagePumpType: reactr
    makeChannels: maybe
    handler: {type: builtin, name: ack}
`,
			want: []string{
				`test.yaml:4:22: subscriptions[0].messagePumpType: unknown messagePumpType "reactr" (did you mean "reactor"?); valid values are reactor, proactor`,
				`test.yaml:5:19: subscriptions[0].makeChannels: unknown makeChannels "maybe"; valid values are create, validate, assume`,
			},
		},
		{
			name: "missing handler",
			src: `subscriptions:
  - name: a
    transport: memory
`,
			want: []string{`test.yaml:2:5: subscriptions[0].handler: required field is missing; a subscription needs a handler (type: builtin, exec or http)`},
		},
		{
			name: "missing name and transport",
			src: `subscriptions:
  - handler: {type: builtin, name: ack}
`,
			want: []string{
				`test.yaml:2:5: subscriptions[0].name: required field is missing`,
				`test.yaml:2:5: subscriptions[0].transport: required field is missing; valid values are sqs, gcp, rocketmq, memory`,
			},
		},
		{
			name: "unknown transport",
			src: `subscriptions:
  - name: a
    transport: kafka
    handler: {type: builtin, name: ack}
`,
			want: []string{`test.yaml:3:16: subscriptions[0].transport: unknown transport "kafka"; valid values are sqs, gcp, rocketmq, memory`},
		},
		{
			name: "duplicate names",
			src: `subscriptions:
  - name: orders
    transport: memory
    handler: {type: builtin, name: ack}
  - name: orders
    transport: memory
    handler: {type: builtin, name: ack}
`,
			want: []string{`test.yaml:5:11: subscriptions[1].name: duplicate subscription name "orders"; first defined at line 2`},
		},
		{
			name: "transport block mismatch",
			src: `connections:
  gcp: {projectId: p}
subscriptions:
  - name: a
    transport: sqs
    handler: {type: builtin, name: ack}
    gcp:
      mode: pull
`,
			want: []string{`test.yaml:7:5: subscriptions[0].gcp: a gcp block does not match transport sqs; remove it or use a sqs block`},
		},
		{
			name: "bad durations",
			src: `subscriptions:
  - name: a
    transport: memory
    timeOut: 30
    requeueDelay: soon
    emptyChannelDelay: -1s
    handler: {type: builtin, name: ack}
`,
			want: []string{
				`test.yaml:4:14: subscriptions[0].timeOut: 30 is not a duration; use a Go duration such as 300ms, 30s or 1m`,
				`test.yaml:5:19: subscriptions[0].requeueDelay: "soon" is not a duration; use a Go duration such as 300ms, 30s or 1m`,
				`test.yaml:6:24: subscriptions[0].emptyChannelDelay: -1s is out of range; valid values are >= 0s`,
			},
		},
		{
			name: "a duration too long to hold, an endpoint that is no URL",
			src: `connections:
  aws:
    endpoint: "not a url:::"
subscriptions:
  - name: a
    transport: sqs
    requeueDelay: 9999999999h
    handler: {type: builtin, name: ack}
`,
			want: []string{
				`test.yaml:3:15: connections.aws.endpoint: "not a url:::" is not an http or https URL (such as http://localhost:4566)`,
				`test.yaml:7:19: subscriptions[0].requeueDelay: "9999999999h" is too long a duration to hold; the longest is 2562047h (about 292 years)`,
			},
		},
		{
			name: "sqs limits",
			src: `subscriptions:
  - name: a
    transport: sqs
    timeOut: 25s
    requeueDelay: 13h
    handler: {type: builtin, name: ack}
    sqs:
      visibilityTimeout: 13h
      messageRetentionPeriod: 30s
      queueType: FIFO
      channelType: topic
      redrivePolicy: {deadLetterQueue: dlq, maxReceiveCount: 0}
`,
			want: []string{
				`test.yaml:4:14: subscriptions[0].timeOut: 25s is out of range; valid values are 0s..20s for sqs (the long-poll maximum)`,
				`test.yaml:5:19: subscriptions[0].requeueDelay: 13h is out of range; valid values are 0s..12h for sqs (the visibility timeout maximum)`,
				`test.yaml:8:26: subscriptions[0].sqs.visibilityTimeout: 13h is out of range; valid values are 0s..12h`,
				`test.yaml:9:31: subscriptions[0].sqs.messageRetentionPeriod: 30s is out of range; valid values are 1m..336h`,
				`test.yaml:10:18: subscriptions[0].sqs.queueType: unknown queueType "FIFO" (did you mean "fifo"?); valid values are standard, fifo`,
				`test.yaml:11:20: subscriptions[0].sqs.channelType: unknown channelType "topic"; valid values are pointToPoint, pubSub`,
				`test.yaml:12:62: subscriptions[0].sqs.redrivePolicy.maxReceiveCount: 0 is out of range; valid values are 1..1000`,
			},
		},
		{
			name: "redrive policy incomplete",
			src: `subscriptions:
  - name: a
    transport: sqs
    handler: {type: builtin, name: ack}
    sqs:
      redrivePolicy:
        maxReceiveCount: 3
`,
			want: []string{`test.yaml:6:7: subscriptions[0].sqs.redrivePolicy.deadLetterQueue: required field is missing`},
		},
		{
			name: "gcp needs a project and a dlq topic",
			src: `subscriptions:
  - name: abc
    transport: gcp
    handler: {type: builtin, name: ack}
    gcp:
      mode: streaming
      deadLetterPolicy: {maxDeliveryAttempts: 3}
`,
			want: []string{
				`test.yaml:5:5: subscriptions[0].gcp.projectId: required field is missing; set gcp.projectId here or connections.gcp.projectId`,
				`test.yaml:6:13: subscriptions[0].gcp.mode: unknown mode "streaming" (did you mean "stream"?); valid values are pull, stream`,
				`test.yaml:7:7: subscriptions[0].gcp.deadLetterPolicy.topic: required field is missing; the dead-letter topic`,
				`test.yaml:7:47: subscriptions[0].gcp.deadLetterPolicy.maxDeliveryAttempts: 3 is out of range; valid values are 0 (the service default, 5) or 5..100`,
			},
		},
		{
			name: "rocketmq needs endpoint and consumer group",
			src: `subscriptions:
  - name: a
    transport: rocketmq
    handler: {type: builtin, name: ack}
`,
			want: []string{
				`test.yaml:3:5: subscriptions[0].rocketmq.consumerGroup: required field is missing; a rocketmq subscription needs its consumer group`,
				`test.yaml:3:5: connections.rocketmq.endpoint: required field is missing; subscription "a" uses transport rocketmq`,
			},
		},
		{
			name: "handler fields of another type",
			src: `subscriptions:
  - name: a
    transport: memory
    handler:
      type: builtin
      name: ack
      url: http://localhost/x
`,
			want: []string{`test.yaml:7:7: subscriptions[0].handler.url: field "url" does not belong to a builtin handler; builtin handlers take type, name, script`},
		},
		{
			name: "handler type missing and unknown",
			src: `subscriptions:
  - name: a
    transport: memory
    handler: {name: ack}
  - name: b
    transport: memory
    handler: {type: lambda}
`,
			want: []string{
				`test.yaml:4:5: subscriptions[0].handler.type: required field is missing; valid values are builtin, exec, http`,
				`test.yaml:7:21: subscriptions[1].handler.type: unknown handler type "lambda"; valid values are builtin, exec, http`,
			},
		},
		{
			name: "builtin name, script and neither",
			src: `subscriptions:
  - name: a
    transport: memory
    handler: {type: builtin, name: nack}
  - name: b
    transport: memory
    handler: {type: builtin, script: "defer,defr,ack"}
  - name: c
    transport: memory
    handler: {type: builtin}
  - name: d
    transport: memory
    handler: {type: builtin, name: ack, script: ack}
`,
			want: []string{
				`test.yaml:4:36: subscriptions[0].handler.name: unknown builtin handler "nack" (did you mean "ack"?); valid values are log, ack, defer, reject, fail, unacceptable`,
				`test.yaml:7:38: subscriptions[1].handler.script: item 2 "defr" is not a builtin outcome (did you mean "defer"?); valid values are log, ack, defer, reject, fail, unacceptable`,
				`test.yaml:10:5: subscriptions[2].handler.name: required field is missing; a builtin handler needs name (log, ack, defer, reject, fail, unacceptable) or script`,
				`test.yaml:13:41: subscriptions[3].handler.script: name and script are mutually exclusive; set one`,
			},
		},
		{
			name: "exec and http handlers",
			src: `subscriptions:
  - name: a
    transport: memory
    handler: {type: exec, args: [x], timeout: 0s}
  - name: b
    transport: memory
    handler:
      type: http
      url: ftp://example.com/x
      tls: {certFile: c.pem}
`,
			want: []string{
				`test.yaml:4:5: subscriptions[0].handler.command: required field is missing; an exec handler needs the command to run`,
				`test.yaml:4:47: subscriptions[0].handler.timeout: 0s is out of range; valid values are > 0s`,
				`test.yaml:9:12: subscriptions[1].handler.url: "ftp://example.com/x" is not an http or https URL (such as http://localhost:8080/handle)`,
				`test.yaml:10:7: subscriptions[1].handler.tls: certFile and keyFile go together; set both or neither`,
			},
		},
		{
			// What the exec handler refuses when consume starts it (an
			// empty name), or what no process can be given (NUL) or would
			// see as another variable ('=' in a name); values never shown.
			name: "exec handler env and args a process cannot be given",
			src: "subscriptions:\n  - name: a\n    transport: memory\n    handler:\n      type: exec\n      command: sh\n      args: [ok, \"a\\0b\"]\n" +
				"      env: {\"\": x, \"A=B\": y, C: \"d\\0e\", D: fine}\n",
			want: []string{
				`test.yaml:7:18: subscriptions[0].handler.args[1]: item 2 holds a NUL byte, which no process can be given`,
				`test.yaml:8:13: subscriptions[0].handler.env.: environment variable name "" is not valid: it must be non-empty and hold no '=' or NUL byte`,
				`test.yaml:8:20: subscriptions[0].handler.env.A=B: environment variable name "A=B" is not valid: it must be non-empty and hold no '=' or NUL byte`,
				`test.yaml:8:30: subscriptions[0].handler.env.C: environment variable "C": its value holds a NUL byte, which no process can be given`,
			},
		},
		{
			// What the http handler (net/http) refuses when consume starts
			// it, in its words; a value is never shown (a secret).
			name: "http handler headers net/http refuses",
			src: "subscriptions:\n  - name: a\n    transport: memory\n    handler:\n      type: http\n      url: http://localhost:8080/h\n      headers:\n" +
				"        X-A: \"a\\r\\nInjected: 1\"\n        X-Nul: \"a\\0b\"\n        \"Bad Name\": ok\n        X-Tab: \"a\\tb\"\n        X-Utf8: \"caf\u00e9\"\n",
			want: []string{
				`test.yaml:8:9: subscriptions[0].handler.headers.X-A: header "X-A": value is not a valid header value (no CR, LF or other control byte but tab)`,
				`test.yaml:9:9: subscriptions[0].handler.headers.X-Nul: header "X-Nul": value is not a valid header value (no CR, LF or other control byte but tab)`,
				"test.yaml:10:9: subscriptions[0].handler.headers.Bad Name: header name \"Bad Name\" is not valid (an HTTP token: letters, digits and !#$%&'*+-.^_`|~)",
			},
		},
		{
			name: "wrong shapes",
			src: `subscriptions:
  - just-a-name
  - name: b
    transport: memory
    handler: builtin
  - name: c
    transport: memory
    handler: {type: exec, command: x, args: x, env: [a]}
`,
			want: []string{
				`test.yaml:2:5: subscriptions[0]: must be a mapping (key: value), got a string`,
				`test.yaml:5:14: subscriptions[1].handler: must be a mapping (key: value), got a string`,
				`test.yaml:8:45: subscriptions[2].handler.args: must be a list, got a string`,
				`test.yaml:8:53: subscriptions[2].handler.env: must be a mapping (key: value), got a list`,
			},
		},
		{
			name: "wrong types",
			src: `subscriptions:
  - name: a
    transport: memory
    bufferSize: 1.5
    handler: {type: builtin, name: ack}
    memory:
      stopWhenEmpty: yes please
`,
			want: []string{
				`test.yaml:4:17: subscriptions[0].bufferSize: must be an integer, got 1.5`,
				`test.yaml:7:22: subscriptions[0].memory.stopWhenEmpty: must be true or false, got "yes please"`,
			},
		},
		{
			name: "unset environment variable",
			src: `subscriptions:
  - name: a
    transport: memory
    handler:
      type: http
      url: http://localhost/x
      headers:
        Authorization: "Bearer ${TOKEN}"
`,
			want: []string{`test.yaml:8:24: subscriptions[0].handler.headers.Authorization: environment variable TOKEN is not set (use ${TOKEN:-default} for a default)`},
		},
		{
			name: "duplicate key",
			src: `subscriptions:
  - name: a
    transport: memory
    name: b
`,
			want: []string{`test.yaml:4:5: YAML syntax error: mapping key "name" already defined at line 2, column 5`},
		},
		{
			name: "top level is a list",
			src:  "- name: a\n",
			want: []string{`test.yaml:1:1: must be a mapping (key: value), got a list`},
		},
		{
			name: "empty subscriptions",
			src:  "subscriptions: []\n",
			want: []string{`test.yaml:1:1: subscriptions: at least one subscription is required`},
		},
		{
			name: "two documents",
			src: `subscriptions:
  - name: a
    transport: memory
    handler: {type: builtin, name: ack}
---
subscriptions: []
`,
			want: []string{`test.yaml:6:1: a subscriptions file holds one YAML document; found 2`},
		},
		{
			name: "unknown alias",
			src: `subscriptions:
  - name: a
    transport: memory
    handler: *h
`,
			want: []string{`test.yaml:4:14: subscriptions[0].handler: alias *h refers to no anchor`},
		},
		{
			// 0s is refused, not read as the 10s default: an operator
			// writing it for an immediate release would get 10s.
			name: "drainTimeout 0s",
			src: `subscriptions:
  - name: a
    transport: memory
    drainTimeout: 0s
    handler: {type: builtin, name: ack}
`,
			want: []string{`test.yaml:4:19: subscriptions[0].drainTimeout: 0s is out of range; valid values are > 0s`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errorTexts(t, tc.src)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestError_FormatsFileLineColumnAndField checks the text and fields of one
// Error.
func TestError_FormatsFileLineColumnAndField(t *testing.T) {
	e := &config.Error{File: "b.yaml", Line: 3, Column: 7, Field: "subscriptions[0].bufferSize", Msg: "11 is out of range"}
	if got, want := e.Error(), "b.yaml:3:7: subscriptions[0].bufferSize: 11 is out of range"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e.Field = ""
	if got, want := e.Error(), "b.yaml:3:7: 11 is out of range"; got != want {
		t.Errorf("Error() without field = %q, want %q", got, want)
	}
	if got := e.Pos(); got != (config.Position{File: "b.yaml", Line: 3, Column: 7}) {
		t.Errorf("Pos() = %+v", got)
	}
}

// requeueCountRange is what an error about requeueCount says its valid
// values are: every whole number a 64-bit integer holds is a budget (0 and
// below -1 reject on the first deferral, as 1 does: budget-zero warns), so
// the message names what a budget means rather than the int64 bounds.
const requeueCountRange = "valid values are -1 (no limit) or the delivery count at which a deferred message is rejected, such as 3 (any whole number that fits in 64 bits)"

// TestErrors_EnvValueAndOverflowRangeNamed: a value from ${VAR}
// that is not valid says it is the variable's value (never showing it:
// environment values may be secrets, docs/security.md), and an integer too large
// for 64 bits is told both bounds, not "any integer" or ">= 0".
func TestErrors_EnvValueAndOverflowRangeNamed(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"subscriptions:\n  - name: a\n    transport: memory\n    requeueCount: ${NU_RC:-abc}\n    handler: {type: builtin, name: ack}\n",
			`subscriptions[0].requeueCount: must be an integer, got the value of "${NU_RC:-abc}" (not shown: environment values may be secrets)`},
		{"subscriptions:\n  - name: a\n    transport: memory\n    requeueCount: 99999999999999999999\n    handler: {type: builtin, name: ack}\n",
			`subscriptions[0].requeueCount: 99999999999999999999 is out of range; ` + requeueCountRange},
		{"subscriptions:\n  - name: a\n    transport: memory\n    requeueCount: -99999999999999999999\n    handler: {type: builtin, name: ack}\n",
			`subscriptions[0].requeueCount: -99999999999999999999 is out of range; ` + requeueCountRange},
		{"subscriptions:\n  - name: a\n    transport: memory\n    bufferSize: 99999999999999999999\n    handler: {type: builtin, name: ack}\n",
			`subscriptions[0].bufferSize: 99999999999999999999 is out of range; valid values are 1..10`},
	} {
		errs := errorTexts(t, tc.yaml)
		if len(errs) != 1 || !strings.HasSuffix(errs[0], tc.want) || strings.Contains(strings.ReplaceAll(errs[0], ":-abc", ""), "abc") {
			t.Errorf("errors %q, want one ending %q", errs, tc.want)
		}
	}
}

package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// TestSchemaAndLoaderAgreeOnWrongFiles: the JSON Schema (checked
// with a real validator, santhosh-tekuri/jsonschema) and the loader give one
// answer on a corpus of files made to probe where the two were written
// apart: the case of enum values, integer ranges (an integer too large for
// any range included), and the brokers' name rules. Each case also says
// which answer is right, so the two cannot agree by both being wrong; an
// out-of-range integer is reported as out of range, never as "not an
// integer".
func TestSchemaAndLoaderAgreeOnWrongFiles(t *testing.T) {
	sch := compileSchema(t)
	const head = "connections: {gcp: {projectId: p}, rocketmq: {endpoint: 127.0.0.1:8081}}\nsubscriptions:\n"
	sub := func(transport, fields string) string {
		return head + "  - name: orders\n    transport: " + transport + "\n    handler: {type: builtin, name: ack}\n" + fields
	}
	twenty := "12345678901234567890"
	long := func(n int) string { return strings.Repeat("q", n) }
	cases := []struct {
		name       string
		src        string
		valid      bool
		loaderSays string // a text the loader's error must hold
	}{
		// The case of enum values: the canonical spelling only.
		{"messagePumpType canonical", sub("memory", "    messagePumpType: reactor\n"), true, ""},
		{"messagePumpType Reactor", sub("memory", "    messagePumpType: Reactor\n"), false, `did you mean "reactor"`},
		{"transport SQS", sub("SQS", ""), false, `did you mean "sqs"`},
		{"makeChannels Validate", sub("memory", "    makeChannels: Validate\n"), false, ""},
		{"channelType pointtopoint", sub("sqs", "    sqs: {channelType: pointtopoint}\n"), false, `did you mean "pointToPoint"`},
		{"queueType FIFO", sub("sqs", "    sqs: {queueType: FIFO}\n"), false, ""},
		{"gcp mode Stream", sub("gcp", "    gcp: {mode: Stream}\n"), false, ""},
		{"handler type Builtin", strings.Replace(sub("memory", ""), "type: builtin", "type: Builtin", 1), false, ""},
		{"builtin name Ack", strings.Replace(sub("memory", ""), "name: ack}", "name: Ack}", 1), false, ""},
		{"script outcome Nack", strings.Replace(sub("memory", ""), "name: ack}", `script: "ack,Nack"}`, 1), false, ""},

		// Integer ranges.
		{"requeueCount largest", sub("memory", "    requeueCount: 9223372036854775807\n"), true, ""},
		{"requeueCount 20 digits", sub("memory", "    requeueCount: "+twenty+"\n"), false, "out of range"},
		{"requeueCount -20 digits", sub("memory", "    requeueCount: -"+twenty+"\n"), false, "out of range"},
		{"requeueCount 3.0", sub("memory", "    requeueCount: 3.0\n"), true, ""},
		{"requeueCount 1.5", sub("memory", "    requeueCount: 1.5\n"), false, "must be an integer"},
		{"requeueCount quoted", sub("memory", "    requeueCount: \"3\"\n"), false, "must be an integer"},
		{"bufferSize 0", sub("memory", "    bufferSize: 0\n"), false, "out of range"},
		{"bufferSize 11", sub("memory", "    bufferSize: 11\n"), false, "out of range"},
		{"bufferSize 20 digits", sub("memory", "    bufferSize: "+twenty+"\n"), false, "out of range"},
		{"noOfPerformers 1001", sub("memory", "    noOfPerformers: 1001\n"), false, "out of range"},
		{"unacceptableMessageLimit -1", sub("memory", "    unacceptableMessageLimit: -1\n"), false, "out of range"},
		{"unacceptableMessageLimit 20 digits", sub("memory", "    unacceptableMessageLimit: "+twenty+"\n"), false, "out of range"},
		{"maxReceiveCount 1001", sub("sqs", "    sqs: {redrivePolicy: {deadLetterQueue: orders-redrive, maxReceiveCount: 1001}}\n"), false, "out of range"},
		{"gcp maxDeliveryAttempts 4", sub("gcp", "    gcp: {deadLetterPolicy: {topic: orders-dlq, maxDeliveryAttempts: 4}}\n"), false, ""},
		{"gcp maxDeliveryAttempts 0", sub("gcp", "    gcp: {deadLetterPolicy: {topic: orders-dlq, maxDeliveryAttempts: 0}}\n"), true, ""},
		{"rocketmq maxDeliveryAttempts 0", sub("rocketmq", "    rocketmq: {consumerGroup: g, maxDeliveryAttempts: 0}\n"), false, "out of range"},
		{"rocketmq maxDeliveryAttempts 20 digits", sub("rocketmq", "    rocketmq: {consumerGroup: g, maxDeliveryAttempts: "+twenty+"}\n"), false, "out of range"},

		// Name rules: SQS queues and SNS topics.
		{"sqs deadLetterRoutingKey orders/dlq", sub("sqs", "    deadLetterRoutingKey: orders/dlq\n"), false, "an SQS queue name may hold only"},
		{"sqs invalidMessageRoutingKey with a space", sub("sqs", "    invalidMessageRoutingKey: \"orders invalid\"\n"), false, ""},
		{"sqs routingKey orders:x", sub("sqs", "    routingKey: orders:x\n"), false, ""},
		{"sqs channelName 80", sub("sqs", "    channelName: "+long(80)+"\n"), true, ""},
		{"sqs channelName 81", sub("sqs", "    channelName: "+long(81)+"\n"), false, "at most 80"},
		{"sqs pubSub routingKey 256", sub("sqs", "    channelName: q\n    routingKey: "+long(256)+"\n    sqs: {channelType: pubSub}\n"), true, ""},
		{"sqs pubSub routingKey 257", sub("sqs", "    channelName: q\n    routingKey: "+long(257)+"\n    sqs: {channelType: pubSub}\n"), false, "at most 256"},
		{"sqs pointToPoint routingKey 80", sub("sqs", "    channelName: q\n    routingKey: "+long(80)+"\n"), true, ""},
		{"sqs pointToPoint routingKey 81", sub("sqs", "    channelName: q\n    routingKey: "+long(81)+"\n    sqs: {channelType: pointToPoint}\n"), false, "an SQS queue name is at most 80"},
		{"sqs pointToPoint routingKey 100", sub("sqs", "    channelName: q\n    routingKey: "+long(100)+"\n"), false, "an SQS queue name is at most 80"},
		{"sqs pointToPoint fifo routingKey 76", sub("sqs", "    channelName: q\n    routingKey: "+long(76)+"\n    sqs: {queueType: fifo}\n"), false, `with ".fifo"`},
		{"sqs pubSub fifo routingKey 251", sub("sqs", "    channelName: q\n    routingKey: "+long(251)+"\n    sqs: {queueType: fifo, channelType: pubSub}\n"), true, ""},
		{"sqs fifo 75", sub("sqs", "    channelName: "+long(75)+"\n    sqs: {queueType: fifo}\n"), true, ""},
		{"sqs fifo 76", sub("sqs", "    channelName: "+long(76)+"\n    sqs: {queueType: fifo}\n"), false, `with ".fifo"`},
		{"sqs fifo 80 ending in .fifo", sub("sqs", "    channelName: "+long(75)+".fifo\n    sqs: {queueType: fifo}\n"), true, ""},
		{"sqs redrive queue a/b", sub("sqs", "    sqs: {redrivePolicy: {deadLetterQueue: a/b, maxReceiveCount: 5}}\n"), false, ""},
		{"sqs name used as channel", strings.Replace(sub("sqs", ""), "name: orders\n", "name: orders/x\n", 1), false, ""},
		{"sqs name with a channelName", strings.Replace(sub("sqs", "    channelName: orders\n"), "name: orders\n", "name: orders/x\n", 1), true, ""},
		{"sqs number name", sub("sqs", "    channelName: 123\n"), true, ""},

		// Pub/Sub ids.
		{"gcp channelName ok", sub("gcp", "    channelName: orders-sub\n"), true, ""},
		{"gcp channelName 2 characters", sub("gcp", "    channelName: ab\n"), false, "3 to 255"},
		{"gcp channelName starts with a digit", sub("gcp", "    channelName: 1abc\n"), false, "starts with a letter"},
		{"gcp channelName goog", sub("gcp", "    channelName: Goog-orders\n"), false, `"goog"`},
		{"gcp deadLetterRoutingKey a/b", sub("gcp", "    deadLetterRoutingKey: orders/dlq\n"), false, ""},
		{"gcp routingKey 256", sub("gcp", "    routingKey: "+long(256)+"\n"), false, ""},
		{"gcp deadLetterPolicy topic with a space", sub("gcp", "    gcp: {deadLetterPolicy: {topic: \"a b c\"}}\n"), false, ""},
		{"gcp number channelName", sub("gcp", "    channelName: 12345\n"), false, ""},

		// RocketMQ topics and groups.
		{"rocketmq channelName a.b", sub("rocketmq", "    channelName: a.b\n    rocketmq: {consumerGroup: g}\n"), false, "may hold only"},
		{"rocketmq channelName 127", sub("rocketmq", "    channelName: "+long(127)+"\n    rocketmq: {consumerGroup: g}\n"), true, ""},
		{"rocketmq channelName 128", sub("rocketmq", "    channelName: "+long(128)+"\n    rocketmq: {consumerGroup: g}\n"), false, "at most 127"},
		{"rocketmq consumerGroup g/1", sub("rocketmq", "    rocketmq: {consumerGroup: g/1}\n"), false, ""},
		{"rocketmq deadLetterRoutingKey %DLQ%g", sub("rocketmq", "    deadLetterRoutingKey: \"%DLQ%g\"\n    rocketmq: {consumerGroup: g}\n"), true, ""},

		// Endpoints: Pub/Sub's emulatorHost and
		// RocketMQ's endpoint are HOST:PORT without a scheme.
		{"gcp emulatorHost host:port", strings.Replace(sub("gcp", ""), "projectId: p}", "projectId: p, emulatorHost: localhost:8085}", 1), true, ""},
		{"gcp emulatorHost [::1]:8085", strings.Replace(sub("gcp", ""), "projectId: p}", "projectId: p, emulatorHost: \"[::1]:8085\"}", 1), true, ""},
		{"gcp emulatorHost empty", strings.Replace(sub("gcp", ""), "projectId: p}", "projectId: p, emulatorHost: \"\"}", 1), true, ""},
		{"gcp emulatorHost with a scheme", strings.Replace(sub("gcp", ""), "projectId: p}", "projectId: p, emulatorHost: \"http://127.0.0.1:8085\"}", 1), false, "no scheme (http://) is taken"},
		{"gcp emulatorHost without a port", strings.Replace(sub("gcp", ""), "projectId: p}", "projectId: p, emulatorHost: localhost}", 1), false, "is HOST:PORT"},
		{"gcp emulatorHost with a space", strings.Replace(sub("gcp", ""), "projectId: p}", "projectId: p, emulatorHost: \"not a url:80\"}", 1), false, "is not a host name"},
		{"rocketmq endpoint list", strings.Replace(sub("rocketmq", "    rocketmq: {consumerGroup: g}\n"), "127.0.0.1:8081", "\"a:8081;b:8081\"", 1), true, ""},
		{"rocketmq endpoint with a scheme", strings.Replace(sub("rocketmq", "    rocketmq: {consumerGroup: g}\n"), "127.0.0.1:8081", "\"http://127.0.0.1:8081\"", 1), false, "a RocketMQ proxy endpoint is HOST:PORT"},
		{"rocketmq endpoint without a port", strings.Replace(sub("rocketmq", "    rocketmq: {consumerGroup: g}\n"), "127.0.0.1:8081", "127.0.0.1", 1), false, "missing port"},

		// Any other name.
		{"name with a tab", strings.Replace(sub("memory", ""), "name: orders\n", "name: \"a\\tb\"\n", 1), false, "control character"},
		{"name 255", strings.Replace(sub("memory", ""), "name: orders\n", "name: "+long(255)+"\n", 1), true, ""},
		{"name 256", strings.Replace(sub("memory", ""), "name: orders\n", "name: "+long(256)+"\n", 1), false, "at most 255"},
		{"memory channelName with a slash", sub("memory", "    channelName: orders/in\n"), true, ""},

		// Top-level extension fields (x-), kept for their anchors.
		{"x- block merged into a subscription", "x-defaults: &d {transport: memory, handler: {type: builtin, name: ack}}\n" + head + "  - <<: *d\n    name: orders\n", true, ""},
		{"x- block of anything", "x-notes: {owner: team-a, tags: [1, two, {three: 3}]}\nx-empty:\n" + sub("memory", ""), true, ""},
		{"a block kept for its anchor without x-", "defaults: &d {transport: memory, handler: {type: builtin, name: ack}}\n" + head + "  - <<: *d\n    name: orders\n", false,
			`unknown field "defaults"; valid fields are connections, subscriptions; a block kept only for its anchor (&d) goes under a top-level key starting with x- (x-defaults), which brighter ignores`},
		{"X- in capitals is no extension", "X-defaults: &d {transport: memory}\n" + sub("memory", ""), false, "(x-defaults)"},
		{"x- inside a subscription is no extension", sub("memory", "    x-notes: hi\n"), false, `unknown field "x-notes"`},
		{"x- inside connections is no extension", strings.Replace(sub("memory", ""), "connections: {", "connections: {x-notes: hi, ", 1), false, `unknown field "x-notes"`},
	}
	noEnv := func(string) (string, bool) { return "", false }
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, lerr := config.Parse("corpus.yaml", []byte(c.src), noEnv)
			serr := validate(sch, []byte(c.src))
			what := func(err error) string {
				if err == nil {
					return "accepts"
				}
				return "refuses"
			}
			if (lerr == nil) != (serr == nil) {
				t.Errorf("the loader %s it and the schema %s it\nloader: %v\nschema: %v\n%s", what(lerr), what(serr), lerr, serr, c.src)
			}
			if (lerr == nil) != c.valid {
				t.Errorf("the loader %s it, want valid=%v: %v", what(lerr), c.valid, lerr)
			}
			if (serr == nil) != c.valid {
				t.Errorf("the schema %s it, want valid=%v: %v", what(serr), c.valid, serr)
			}
			if lerr != nil && c.loaderSays != "" && !strings.Contains(lerr.Error(), c.loaderSays) {
				t.Errorf("the loader says %q, want it to say %q", lerr, c.loaderSays)
			}
			if lerr != nil && strings.Contains(c.name, "20 digits") && strings.Contains(lerr.Error(), "must be an integer") {
				t.Errorf("an integer too large is out of range, not %q", lerr)
			}
		})
	}
	_ = fmt.Sprint
}

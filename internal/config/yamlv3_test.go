package config_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// The decoder reads go.yaml.in/yaml/v3's tree as it read goccy/go-yaml's:
// each file below gives the error, at the line and column, or the values
// goccy/go-yaml's tree gave (recorded from the decoder that walked it).
// Columns count characters, not bytes, and no tab; a value after a tag is
// a column early and one followed by spaces that many late, as
// goccy/go-yaml put them; scalars are typed by goccy/go-yaml's rules (yes
// is a string, 010 octal, 1e3 a string, .inf a number); a tab inside a
// plain value is dropped; keys written twice, an explicit key (?), a tag
// with no value and an alias before its anchor are refused or read as
// before.
func TestParse_ReadsTheFileAsGoccyYAMLDid(t *testing.T) {
	bigMap := func() string {
		var b strings.Builder
		for i := 0; i < 40; i++ {
			fmt.Fprintf(&b, "      k%d: v\n", i)
		}
		return b.String()
	}()
	base := "subscriptions:\n  - name: a\n    transport: memory\n    handler: {type: builtin, name: ack}\n"
	for _, c := range []struct{ name, sub, wantErr, wantValues string }{
		{"tab before a value", "    requeueCount:\t\"x\"\n", "t.yaml:5:18: subscriptions[0].requeueCount: must be an integer, got \"x\"", ""},
		{"tabs before a flow item", "    memory: {seed:\tx,\t\tcolour: 1}\n", "t.yaml:5:27: YAML syntax error: tab character cannot use as a map key directly", ""},
		{"multibyte before a flow item", "    memory: {seed: \"é€\", colour: 1}\n", "t.yaml:5:26: subscriptions[0].memory.colour: unknown field \"colour\"; valid fields are seed, output, stopWhenEmpty, visibilityTimeout", ""},
		{"a value after a tag", "    requeueCount: !!str five\n", "t.yaml:5:24: subscriptions[0].requeueCount: must be an integer, got \"five\"", ""},
		{"a value after an unknown tag", "    requeueCount: !num 5\n", "", `{"buf":1,"ch":"a","rc":5,"rk":"a"}`},
		{"a value after an anchor", "    requeueCount: &n five\n", "t.yaml:5:22: subscriptions[0].requeueCount: must be an integer, got \"five\"", ""},
		{"trailing spaces", "    requeueCount: five  \n", "t.yaml:5:21: subscriptions[0].requeueCount: must be an integer, got \"five\"", ""},
		{"an empty value at the end", "    requeueDelay: ", "t.yaml:5:19: subscriptions[0].requeueDelay: an empty value is not a duration; use a Go duration such as 300ms, 30s or 1m", ""},
		{"a tab inside a plain value", "    channelName: ab\tcd\n", "", `{"buf":1,"ch":"abcd","rc":-1,"rk":"abcd"}`},
		{"yes", "    memory: {stopWhenEmpty: yes}\n", "t.yaml:5:29: subscriptions[0].memory.stopWhenEmpty: must be true or false, got \"yes\"", ""},
		{"octal", "    requeueCount: 010\n", "", `{"buf":1,"ch":"a","rc":8,"rk":"a"}`},
		{"0o octal", "    requeueCount: 0o10\n", "", `{"buf":1,"ch":"a","rc":8,"rk":"a"}`},
		{"hex", "    requeueCount: 0x1F\n", "", `{"buf":1,"ch":"a","rc":31,"rk":"a"}`},
		{"underscores", "    requeueCount: 1_0\n", "", `{"buf":1,"ch":"a","rc":10,"rk":"a"}`},
		{"exponent", "    requeueCount: 1e3\n", "t.yaml:5:19: subscriptions[0].requeueCount: must be an integer, got \"1e3\"", ""},
		{"float", "    requeueCount: 3.0\n", "", `{"buf":1,"ch":"a","rc":3,"rk":"a"}`},
		{"infinity", "    requeueCount: .inf\n", "t.yaml:5:19: subscriptions[0].requeueCount: must be an integer, got .inf", ""},
		{"plus infinity", "    requeueCount: +.inf\n", "t.yaml:5:19: subscriptions[0].requeueCount: must be an integer, got \"+.inf\"", ""},
		{"tilde", "    requeueCount: ~\n", "t.yaml:5:19: subscriptions[0].requeueCount: must be an integer, got an empty value", ""},
		{"True", "    memory: {stopWhenEmpty: True}\n", "", `{"buf":1,"ch":"a","rc":-1,"rk":"a"}`},
		{"quoted number", "    requeueCount: \"3\"\n", "t.yaml:5:19: subscriptions[0].requeueCount: must be an integer, got \"3\"", ""},
		{"block scalar number", "    requeueCount: |\n      4\n", "", `{"buf":1,"ch":"a","rc":4,"rk":"a"}`},
		{"timestamp", "    channelName: 2001-12-14\n", "", `{"buf":1,"ch":"2001-12-14","rc":-1,"rk":"2001-12-14"}`},
		{"merge key text as a value", "    channelName: <<\n", "", `{"buf":1,"ch":"\u003c\u003c","rc":-1,"rk":"\u003c\u003c"}`},
		{"quoted merge key", "    \"<<\": {bufferSize: 2}\n", "t.yaml:5:5: subscriptions[0].<<: unknown field \"<<\"; valid fields are name, transport, channelName, routingKey, messagePumpType, bufferSize, noOfPerformers, timeOut, requeueCount, requeueDelay, unacceptableMessageLimit, unacceptableMessageLimitWindow, emptyChannelDelay, channelFailureDelay, maxChannelFailureDelay, callTimeout, stallAfter, drainTimeout, maxLeaseExtension, makeChannels, deadLetterRoutingKey, invalidMessageRoutingKey, handler, sqs, gcp, rocketmq, memory", ""},
		{"a tag with no value", "    channelName: !!str\n    bufferSize: 2\n", "t.yaml:6:5: YAML syntax error: unexpected scalar value", ""},
		{"an alias before its anchor", "    channelName: *c\n    routingKey: &c orders\n", "", `{"buf":1,"ch":"orders","rc":-1,"rk":"orders"}`},
		{"an alias of no anchor and another error", "    channelName: *nope\n    bufferSize: 11\n", "t.yaml:5:18: subscriptions[0].channelName: alias *nope refers to no anchor | t.yaml:6:17: subscriptions[0].bufferSize: 11 is out of range; valid values are 1..10", ""},
		{"a key written twice, nested", "    handler2: 1\n    memory: {seed: x, seed: y}\n", "t.yaml:6:23: YAML syntax error: mapping key \"seed\" already defined at line 6, column 14", ""},
		{"a merge key written twice", "    <<: {bufferSize: 2}\n    <<: {bufferSize: 3}\n", "t.yaml:6:5: YAML syntax error: mapping key \"<<\" already defined at line 5, column 5", ""},
		{"NEL and line separator in a value", "    channelName: \"a\u0085b\u2028c\"\n", "t.yaml:5:5: subscriptions[0].channelName: \"a\\u0085b\\u2028c\": a name must not hold a control character; U+0085 is not allowed", ""},
		{"BOM inside a value", "    channelName: a\ufeffb\n", "", "{\"buf\":1,\"ch\":\"a\ufeffb\",\"rc\":-1,\"rk\":\"a\ufeffb\"}"},
		{"explicit key", "    ? bufferSize\n    : 2\n", "t.yaml:5:7: subscriptions[0]: a key must be a plain name, got a mappingkey", ""},
		{"a key written twice, quoted once", "    bufferSize: 2\n    'bufferSize': 3\n", "t.yaml:6:5: YAML syntax error: mapping key \"bufferSize\" already defined at line 5, column 5", ""},
		{"keys of list items", "    memory: {seed: x}\n  - {name: b, transport: memory, handler: {type: builtin, name: ack}, memory: {seed: x}}\n", "", `{"buf":1,"ch":"a","rc":-1,"rk":"a"}`},
		{"a key written twice in a large mapping", "    handler2:\n" + bigMap + "      k3: again\n", "t.yaml:46:7: YAML syntax error: mapping key \"k3\" already defined at line 9, column 7", ""},
		{"two keys written twice", "    memory: {seed: x, seed: y}\n    bufferSize: 1\n    bufferSize: 2\n", "t.yaml:5:23: YAML syntax error: mapping key \"seed\" already defined at line 5, column 14", ""},
		{"tabs after a colon", "    bufferSize:\t\t2\n    requeueCount:\tx\n", "t.yaml:6:18: subscriptions[0].requeueCount: must be an integer, got \"x\"", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := config.Parse("t.yaml", []byte(base+c.sub), noEnv())
			if c.wantErr != "" {
				if err == nil || strings.ReplaceAll(err.Error(), "\n", " | ") != c.wantErr {
					t.Fatalf("got %v\nwant %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			s := f.Subscriptions[0]
			b, _ := json.Marshal(map[string]any{"rc": s.RequeueCount, "ch": s.ChannelName, "rk": s.RoutingKey, "buf": s.BufferSize})
			if string(b) != c.wantValues {
				t.Fatalf("values %s, want %s", b, c.wantValues)
			}
		})
	}
}

package config

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestSchemaListsMatchDecoder: every field name and enum value the decoder
// knows is the schema's, and no other, so the two cannot drift apart when a
// field or value is added to one of them.
func TestSchemaListsMatchDecoder(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	at := func(path ...string) any {
		var v any = doc
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("schema: %v: not an object at %q", path, p)
			}
			v = m[p]
		}
		return v
	}
	keys := func(path ...string) []string {
		m, _ := at(path...).(map[string]any)
		var out []string
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	enum := func(path ...string) []string {
		var out []string
		for _, v := range at(append(path, "enum")...).([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	same := func(what string, schema, decoder []string) {
		t.Helper()
		a, b := slices.Clone(schema), slices.Clone(decoder)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Errorf("%s: schema has %v, decoder has %v", what, a, b)
		}
	}
	same("top-level fields", keys("properties"), topFields)
	same("connections fields", keys("properties", "connections", "properties"), connFields)
	same("connections.aws fields", keys("properties", "connections", "properties", "aws", "properties"), awsFields)
	same("connections.gcp fields", keys("properties", "connections", "properties", "gcp", "properties"), gcpConnFields)
	same("connections.rocketmq fields", keys("properties", "connections", "properties", "rocketmq", "properties"), rocketConnFlds)
	same("subscription fields", keys("$defs", "subscription", "properties"), subFields)
	for tr, fields := range blockFields {
		same(string(tr)+" block fields", keys("$defs", string(tr), "properties"), fields)
	}
	same("handler fields", keys("$defs", "handler", "properties"), allHandlerFields)
	same("tls fields", keys("$defs", "handler", "properties", "tls", "properties"), tlsFields)
	// The decoder reads its enums from the schema; the Go constants the
	// rest of brighter switches on must be exactly those values.
	same("transport", enum("$defs", "subscription", "properties", "transport"), []string{string(TransportSQS), string(TransportGCP), string(TransportRocketMQ), string(TransportMemory)})
	same("messagePumpType", enum("$defs", "subscription", "properties", "messagePumpType"), []string{string(Reactor), string(Proactor)})
	same("makeChannels", enum("$defs", "subscription", "properties", "makeChannels"), []string{string(MakeChannelsCreate), string(MakeChannelsValidate), string(MakeChannelsAssume)})
	same("handler type", enum("$defs", "handler", "properties", "type"), []string{string(HandlerBuiltin), string(HandlerExec), string(HandlerHTTP)})
	same("builtin outcomes", enum("$defs", "outcome"), []string{BuiltinLog, BuiltinAck, BuiltinDefer, BuiltinReject, BuiltinFail, BuiltinUnacceptable})
	same("sqs channelType", enum("$defs", "sqs", "properties", "channelType"), []string{ChannelPointToPoint, ChannelPubSub})
	same("sqs queueType", enum("$defs", "sqs", "properties", "queueType"), []string{QueueStandard, QueueFIFO})
	same("gcp mode", enum("$defs", "gcp", "properties", "mode"), []string{GCPModePull, GCPModeStream})
	for i, h := range []HandlerType{HandlerBuiltin, HandlerExec, HandlerHTTP} {
		names := at("$defs", "handler", "allOf").([]any)[i].(map[string]any)["then"].(map[string]any)["propertyNames"].(map[string]any)["enum"].([]any)
		var got []string
		for _, n := range names {
			got = append(got, n.(string))
		}
		same(string(h)+" handler fields", got, handlerFields[h])
	}
}

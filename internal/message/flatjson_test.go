package message_test

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/brightergo/brighter/internal/message"
)

// flatJSONSeeds are objects Brighter's producers write, and every shape
// ScanFlatStrings must leave to encoding/json.
var flatJSONSeeds = []string{
	`{"datacontenttype":"application/json","dataschema":"","specversion":"1.0","type":"goparamore.io","souce":"http://goparamore.io","time":"2026-11-30T12:00:00.0000000Z","baggage":"","id":"4f1c2a9e"}`,
	`{"handled-count":"0"}`,
	`{}`, ` { } `, "\t{\n\"a\" : \"b\" ,\r\"c\":\"d\"}\n",
	`{"a":"1","a":"2"}`, `{"Type":"upper","type":"lower"}`,
	`{"a":"caf\u00e9"}`, `{"a":"café ✓ 😀"}`, `{"a":"x\"y"}`, `{"a":"x\\y"}`, `{"a\u0041":"b"}`,
	`{"a":1}`, `{"a":true}`, `{"a":null}`, `{"a":["x"]}`, `{"a":{"b":"c"}}`, `{"a":"b",}`,
	`{"a":"b"} x`, `{"a":"b"}{}`, `{"a" "b"}`, `{"a":"b" "c":"d"}`, `{"a":"b"`, `{"a":`, `{`, ``, `null`, `[]`, `"s"`,
	"{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xed\xa0\x80\"}", "\ufeff{}", `{'a':'b'}`, `{a:"b"}`,
}

// Whatever ScanFlatStrings accepts, encoding/json accepts too and reads
// to the same members, into a map[string]string (cloudeventheaders) and a
// map[string]any (the bag); keys are compared as they are, so "Type" and
// "type" stay two members. What it refuses is left to encoding/json.
func FuzzScanFlatStringsAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range flatJSONSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		flatAgrees(t, data)
	})
}

// flatAgrees fails t when ScanFlatStrings accepts data and encoding/json
// reads it otherwise.
func flatAgrees(t *testing.T, data string) bool {
	t.Helper()
	got := map[string]string{}
	if !message.ScanFlatStrings(data, func(k, v string) { got[k] = v }) {
		return false
	}
	var want map[string]string
	if err := json.Unmarshal([]byte(data), &want); err != nil {
		t.Fatalf("ScanFlatStrings accepted %q, which encoding/json refuses: %v", data, err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("ScanFlatStrings(%q) = %v, encoding/json reads %v", data, got, want)
	}
	var wantAny map[string]any
	if err := json.Unmarshal([]byte(data), &wantAny); err != nil {
		t.Fatalf("encoding/json refuses %q as map[string]any: %v", data, err)
	}
	for k, v := range wantAny {
		if s, ok := v.(string); !ok || s != got[k] {
			t.Fatalf("ScanFlatStrings(%q)[%q] = %q, encoding/json reads %#v into a map[string]any", data, k, got[k], v)
		}
	}
	return true
}

// The shapes Brighter writes are read on the fast path; everything with an
// escape, a value that is not a string, invalid UTF-8 or bad JSON is not.
func TestScanFlatStringsTakesBrightersShapesOnly(t *testing.T) {
	accepted := map[string]bool{
		flatJSONSeeds[0]: true, flatJSONSeeds[1]: true, `{}`: true, ` { } `: true, "\t{\n\"a\" : \"b\" ,\r\"c\":\"d\"}\n": true,
		`{"a":"1","a":"2"}`: true, `{"Type":"upper","type":"lower"}`: true, `{"a":"café ✓ 😀"}`: true,
	}
	for _, s := range flatJSONSeeds {
		if got := flatAgrees(t, s); got != accepted[s] {
			t.Errorf("ScanFlatStrings(%q) accepted = %v, want %v", s, got, accepted[s])
		}
	}
	got := map[string]string{}
	message.ScanFlatStrings(`{"Type":"upper","type":"lower","a":"1","a":"2"}`, func(k, v string) { got[k] = v })
	if want := map[string]string{"Type": "upper", "type": "lower", "a": "2"}; !maps.Equal(got, want) {
		t.Errorf("members %v, want %v (keys as they are, the last of a repeated key)", got, want)
	}
}

// BenchmarkScanFlatStrings compares the fast path with encoding/json on a
// cloudeventheaders attribute as Brighter writes it.
func BenchmarkScanFlatStrings(b *testing.B) {
	data := flatJSONSeeds[0]
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := make(map[string]string, 8)
			message.ScanFlatStrings(data, func(k, v string) { m[k] = v })
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]string
			_ = json.Unmarshal([]byte(data), &m)
		}
	})
}

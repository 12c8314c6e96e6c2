package message

import (
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// ScanFlatStrings reads data when it is a JSON object whose every value is
// a string and whose keys and values hold no escape sequence, no control
// character and only valid UTF-8: the shape Brighter's producers write for
// SQS's cloudeventheaders and bag attributes. It then calls put with each
// member's key and value, in the order they appear (a repeated key is
// put again: the last wins, as with encoding/json), and returns true. The
// strings passed to put share data's memory.
//
// For anything else (a number, boolean, null, array or object value, an
// escape, invalid UTF-8, malformed JSON, anything but whitespace after the
// object) it returns false, possibly after some calls to put; the caller
// then discards what put received and decodes data with encoding/json.
// For every input it accepts, the members are exactly those json.Unmarshal
// gives for a map[string]string or map[string]any (keys compared as they
// are, case included), so a caller's results do not depend on which path
// read them. The JSON is validated and read by gjson (no allocation for
// such an object), several times faster than encoding/json into a map.
func ScanFlatStrings(data string, put func(key, value string)) bool {
	if !gjson.Valid(data) {
		return false
	}
	doc := gjson.Parse(data)
	if !doc.IsObject() {
		return false
	}
	flat := true
	doc.ForEach(func(key, value gjson.Result) bool {
		if value.Type != gjson.String || !plainJSONString(key.Raw) || !plainJSONString(value.Raw) {
			flat = false
			return false
		}
		put(key.Str, value.Str)
		return true
	})
	return flat
}

// plainJSONString reports whether raw, a JSON string as written (quotes
// included), holds no escape and only valid UTF-8: then its text is the
// bytes between the quotes, as encoding/json reads it (which would
// unescape an escape and replace invalid UTF-8 with U+FFFD).
func plainJSONString(raw string) bool {
	return !strings.Contains(raw, `\`) && utf8.ValidString(raw)
}

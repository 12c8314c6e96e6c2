package message

import "unicode/utf8"

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
// read them; it is several times faster and allocates nothing.
func ScanFlatStrings(data string, put func(key, value string)) bool {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipJSONSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipJSONSpace(data, i+1) == len(data)
	}
	for {
		key, next, ok := scanPlainJSONString(data, i)
		if !ok {
			return false
		}
		i = skipJSONSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipJSONSpace(data, i+1)
		value, next, ok := scanPlainJSONString(data, i)
		if !ok {
			return false
		}
		put(key, value)
		i = skipJSONSpace(data, next)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipJSONSpace(data, i+1)
		case '}':
			return skipJSONSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// skipJSONSpace returns the index of the first byte of data at or after i
// that is not JSON whitespace (space, tab, line feed, carriage return).
func skipJSONSpace(data string, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanPlainJSONString reads the JSON string starting at data[i] (its
// opening quote) and returns its text and the index after its closing
// quote; ok is false when there is no string there, or it holds an escape,
// a control character or invalid UTF-8 (which encoding/json would unescape,
// refuse or replace).
func scanPlainJSONString(data string, i int) (s string, next int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	start := i + 1
	ascii := true
	for j := start; j < len(data); j++ {
		c := data[j]
		switch {
		case c == '"':
			s = data[start:j]
			if !ascii && !utf8.ValidString(s) {
				return "", 0, false
			}
			return s, j + 1, true
		case c == '\\' || c < 0x20:
			return "", 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", 0, false
}

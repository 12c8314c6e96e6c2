package config

import "testing"

// TestExpandEnv covers the expansion rules on their own.
func TestExpandEnv(t *testing.T) {
	env := func(k string) (string, bool) {
		switch k {
		case "SET":
			return "v", true
		case "EMPTY":
			return "", true
		}
		return "", false
	}
	cases := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"$HOME and $", "$HOME and $", ""},
		{"${SET}", "v", ""},
		{"a${SET}b${SET}", "avbv", ""},
		{"${UNSET:-d}", "d", ""},
		{"${EMPTY:-d}", "d", ""},
		{"${SET:-d}", "v", ""},
		{"${EMPTY}", "", ""},
		{"${UNSET:-}", "", ""},
		{"$${SET}", "${SET}", ""},
		{"${UNSET}", "", "environment variable UNSET is not set (use ${UNSET:-default} for a default)"},
		{"${SET", "", `unterminated ${ in "${SET"`},
		{"${}", "", `invalid variable name "" in ${}; use letters, digits and _`},
		{"${A-B}", "", `invalid variable name "A-B" in ${A-B}; use letters, digits and _`},
	}
	for _, c := range cases {
		got, err := expandEnv(c.in, env)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("expandEnv(%q) error = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("expandEnv(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestClosest_SuggestsOnlyNearTypos checks the typo suggestions.
func TestClosest_SuggestsOnlyNearTypos(t *testing.T) {
	valid := []string{"bufferSize", "requeueCount", "requeueDelay", "name"}
	for in, want := range map[string]string{
		"buffersize": "bufferSize", "requeuecount": "requeueCount", "requeuDelay": "requeueDelay",
		"nam": "name", "colour": "", "completelyDifferentThing": "",
	} {
		if got := closest(in, valid); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
	if got := FormatDuration(12 * 3600e9); got != "12h" {
		t.Errorf("FormatDuration(12h) = %q", got)
	}
	if got := FormatDuration(90e9); got != "1m30s" {
		t.Errorf("FormatDuration(90s) = %q", got)
	}
}

package config

import (
	"fmt"
	"strings"

	"github.com/brightergo/brighter/internal/redact"
)

// expandEnv replaces ${VAR} and ${VAR:-default} in s using lookup. "$${"
// stands for a literal "${". A "$" not followed by "{" is kept as it is. An
// unset variable without a default, an unterminated "${" and an invalid
// variable name are errors. ${VAR:-default} uses default when VAR is unset
// or empty, as in the shell; the default is not itself expanded.
func expandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(c)
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %s", redact.Quote(s))
		}
		expr := s[i+2 : i+2+end]
		i += 2 + end + 1
		name, def, hasDef := strings.Cut(expr, ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("invalid variable name %s in %s; use letters, digits and _", redact.Quote(name), redact.Cut("${"+expr+"}"))
		}
		v, ok := lookup(name)
		switch {
		case hasDef && v == "":
			v = def
		case !ok:
			return "", fmt.Errorf("environment variable %s is not set (use ${%s:-default} for a default)", redact.Cut(name), redact.Cut(name))
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func validVarName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

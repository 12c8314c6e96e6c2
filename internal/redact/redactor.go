package redact

import (
	"net/url"
	"slices"
	"strings"
	"sync"
)

// MinSecret is the shortest value, in bytes, a Redactor masks: shorter values (a
// user name such as "test", a header such as "1") would mask ordinary text
// and protect nothing; real keys and tokens are longer.
const MinSecret = 8

// Redactor applies the rule (Text) and masks the values it was told are
// secret. The zero value applies the rule only. A Redactor is safe for
// concurrent use; Add may be called while it is in use (consume learns the
// secrets once the subscriptions file is read, after its logger exists).
type Redactor struct {
	mu      sync.RWMutex
	secrets []string // longest first, so a secret that contains another is masked whole
}

// Add registers values as secret. Values shorter than MinSecret bytes are
// ignored. Safe on a nil Redactor (no-op).
func (r *Redactor) Add(values ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		if len(v) >= MinSecret && !slices.Contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
		}
	}
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

// String returns s with URLs redacted (Text) and every registered secret
// replaced by Mask. Safe on a nil Redactor (Text only).
func (r *Redactor) String(s string) string {
	s = Text(s)
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	return s
}

// URLSecrets returns the parts of raw the rule hides (the user name and
// password, each query value raw and decoded, the fragment), for a
// Redactor to mask wherever else they appear. A raw that does not parse
// gives none (URL and Text still redact it by its text).
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		out = append(out, u.User.Username())
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
	}
	for _, kv := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		_, v, _ := strings.Cut(kv, "=")
		out = append(out, v)
		if d, err := url.QueryUnescape(v); err == nil {
			out = append(out, d)
		}
	}
	if u.Fragment != "" {
		out = append(out, u.Fragment)
	}
	return out
}

package redact

import (
	"slices"
	"strings"
	"sync"
)

// MinSecret is the shortest value a Redactor masks: shorter values (a
// one-letter user name, "1") would mask ordinary text and protect nothing.
const MinSecret = 4

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

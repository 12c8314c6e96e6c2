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

// SecretEnv are the environment variables whose values are secrets of
// every run: the AWS SDK reads its keys from them, and an exec handler's
// program inherits them, so a handler that prints its environment would
// otherwise show them.
var SecretEnv = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}

// Redactor applies the rule (Text) and masks the values it was told are
// secret. The zero value applies the rule only. A Redactor is safe for
// concurrent use; Add and Include may be called while it is in use
// (consume learns the secrets once the subscriptions file is read, after
// its logger exists).
type Redactor struct {
	mu       sync.RWMutex
	secrets  []string
	included []*Redactor
}

// Add registers values as secret. Values shorter than MinSecret bytes are
// ignored. The order values are added in does not matter: String masks
// every byte any of them covers. Safe on a nil Redactor (no-op).
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
}

// Include makes r mask the secrets of other too, those other has now and
// those added to it later: a handler's own Redactor includes the run's,
// so that the text the handler returns is masked once, with every secret,
// before anything stores it. Including r itself, nil, or a Redactor that
// includes r is harmless. Safe on a nil r (no-op).
func (r *Redactor) Include(other *Redactor) {
	if r == nil || other == nil || other == r {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.included, other) {
		r.included = append(r.included, other)
	}
}

// collect appends the secrets of r and of every Redactor it includes to
// out; seen guards against a Redactor included twice or in a cycle.
func (r *Redactor) collect(out []string, seen map[*Redactor]bool) []string {
	if r == nil || seen[r] {
		return out
	}
	seen[r] = true
	r.mu.RLock()
	out = append(out, r.secrets...)
	inc := slices.Clone(r.included)
	r.mu.RUnlock()
	for _, o := range inc {
		out = o.collect(out, seen)
	}
	return out
}

// String returns s with every registered secret (its own and those of
// the Redactors it includes) replaced by Mask, then URLs redacted (Text).
// Every byte that any occurrence of any secret covers is masked, whatever
// the order the secrets were added in: secrets that overlap or contain one
// another ("svc-user" inside "svc-user-pw") become one Mask, and no tail
// of one survives the masking of another. Safe on a nil Redactor (Text
// only).
func (r *Redactor) String(s string) string {
	if r == nil {
		return Text(s)
	}
	return Text(maskAll(s, r.collect(nil, map[*Redactor]bool{})))
}

// maskAll replaces every run of bytes of s covered by an occurrence of a
// secret by one Mask.
func maskAll(s string, secrets []string) string {
	var covered []bool // nil until a secret is found
	for _, v := range secrets {
		if v == "" || !strings.Contains(s, v) {
			continue
		}
		if covered == nil {
			covered = make([]bool, len(s))
		}
		// Every occurrence, overlapping ones included: the search moves
		// on by one byte, not by the secret's length.
		for from := 0; from <= len(s)-len(v); {
			i := strings.Index(s[from:], v)
			if i < 0 {
				break
			}
			for j := from + i; j < from+i+len(v); j++ {
				covered[j] = true
			}
			from += i + 1
		}
	}
	if covered == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !covered[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(Mask)
		for i < len(s) && covered[i] {
			i++
		}
	}
	return b.String()
}

// URLSecrets returns the parts of raw the rule hides, for a Redactor to
// mask wherever else they appear: the user name and password, each as
// written and percent-decoded; each query value as written and decoded;
// the fragment; and the path (as written and decoded, without its leading
// "/") when it has more than one segment or its one segment looks like a
// token, with each of its segments that looks like a token (at least
// MinSecret bytes holding a digit, or at least 16 bytes). The path is a secret because webhook endpoints carry their
// token in it (https://hooks.example/services/T000/TOKEN). raw need not
// parse: the parts are found by their text as URL finds them.
func URLSecrets(raw string) []string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil
	}
	var out []string
	both := func(v string) {
		out = append(out, v)
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth, rest := rest[:authEnd], rest[authEnd:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		info := auth[:at]
		both(info)
		if user, pw, ok := strings.Cut(info, ":"); ok {
			both(user)
			both(pw)
		}
	}
	path := rest
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path, rest = path[:i], path[i:]
	} else {
		rest = ""
	}
	if p := strings.TrimPrefix(path, "/"); p != "" {
		// The whole path, where it is more than one word: a path of one
		// segment ("/messages") is a secret only when it looks like a
		// token, as a segment is, or the word would be masked in every
		// line printed (a lint finding's "6 messages").
		if strings.Contains(p, "/") || tokenLike(p) {
			both(p)
		}
		for _, seg := range strings.Split(p, "/") {
			if tokenLike(seg) {
				both(seg)
			}
		}
	}
	query, frag, _ := strings.Cut(rest, "#")
	if q, ok := strings.CutPrefix(query, "?"); ok {
		for _, kv := range strings.FieldsFunc(q, func(r rune) bool { return r == '&' || r == ';' }) {
			k, v, _ := strings.Cut(kv, "=")
			if Kept[k] {
				continue
			}
			out = append(out, v)
			if d, err := url.QueryUnescape(v); err == nil && d != v {
				out = append(out, d)
			}
		}
	}
	if frag != "" {
		out = append(out, frag)
	}
	return out
}

// tokenLike reports whether a path segment looks like a credential rather
// than a word: at least MinSecret bytes with a digit in them, or at least
// 16 bytes. Words such as "services" or "webhooks" are left alone, so
// that they are not masked in every log line.
func tokenLike(seg string) bool {
	if len(seg) >= 16 {
		return true
	}
	return len(seg) >= MinSecret && strings.ContainsAny(seg, "0123456789")
}

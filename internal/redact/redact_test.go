package redact

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

func TestURL_RedactsUserInfoQueryAndFragment(t *testing.T) {
	cases := map[string]string{
		"http://user:pw@host:8080/handle?token=abc&x=1#frag": "http://REDACTED@host:8080/handle?token=REDACTED&x=REDACTED#REDACTED",
		"https://host/path":         "https://host/path",
		"http://host/p?secret":      "http://host/p?REDACTED",
		"http://a@b@host/p?k=v;w=z": "http://REDACTED@host/p?k=REDACTED&w=REDACTED",
		"/handle?token=abc":         "/handle?token=REDACTED",
		"http://host?":              "http://host?",
		"not a url":                 "not a url",
	}
	for in, want := range cases {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestText_RedactsEveryURLInAnError(t *testing.T) {
	in := `http handler: POST http://u:***@127.0.0.1:9/h?token=s3cret: Post "http://u:***@127.0.0.1:9/h?token=s3cret": dial tcp 127.0.0.1:9: connect: connection refused`
	got := Text(in)
	if strings.Contains(got, "s3cret") || strings.Contains(got, "u:***") {
		t.Fatalf("Text kept a secret: %s", got)
	}
	if !strings.Contains(got, "dial tcp 127.0.0.1:9: connect: connection refused") || !strings.Contains(got, `"http://REDACTED@127.0.0.1:9/h?token=REDACTED"`) {
		t.Fatalf("Text changed more than the URLs: %s", got)
	}
}

func TestQuote_CutsLongValuesAndShowsTheirLength(t *testing.T) {
	long := strings.Repeat("k", 200_000)
	got := Quote(long)
	if len(got) > MaxQuoted+40 || !strings.HasSuffix(got, "(200000 bytes)") {
		t.Fatalf("Quote(200 KB) = %q (%d bytes)", got[:min(len(got), 200)], len(got))
	}
	if Quote("short") != `"short"` || Cut("short") != "short" {
		t.Fatalf("short values must be left whole")
	}
	if got := Cut(long); !strings.HasSuffix(got, "… (200000 bytes)") || len(got) > MaxQuoted+40 {
		t.Fatalf("Cut(200 KB) = %q", got[:min(len(got), 200)])
	}
	// A cut never splits a rune.
	if q := Cut(strings.Repeat("é", 200)); !strings.HasPrefix(q, strings.Repeat("é", MaxQuoted/2)) {
		t.Fatalf("Cut split a rune: %q", q)
	}
}

func TestBound_CutsEveryLongValueInFreeText(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	spaced := strings.Repeat("a ", 100_000)
	cases := map[string]string{
		"pflag invalid argument": fmt.Sprintf("invalid argument %q for %q flag: strconv.ParseInt: parsing %q: invalid syntax", long, "--limit", long),
		"value with spaces":      fmt.Sprintf("unknown command %q for %q", spaced, "brighter"),
		"unquoted word":          "unknown flag: --" + long,
		"after a colon":          fmt.Sprintf("--to=%q: bad", long),
	}
	for name, text := range cases {
		got := Bound(text)
		if len(got) > 4*MaxQuoted+200 || !strings.Contains(got, "bytes)") {
			t.Errorf("%s: Bound gave %d bytes: %.300s", name, len(got), got)
		}
	}
	// Short values, and a value Quote already cut, are left as they are.
	for _, text := range []string{
		`unknown command "dlqq" for "brighter"; did you mean dlq?`,
		fmt.Sprintf("--to %s: no such topic", Quote(long)),
		"a plain sentence of short words that is longer than MaxQuoted bytes in all, " + strings.Repeat("word ", 40),
	} {
		if got := Bound(text); got != text {
			t.Errorf("Bound changed %q into %q", text, got)
		}
	}
	if got := Bound(fmt.Sprintf("x %q y", long)); !strings.HasPrefix(got, "x ") || !strings.HasSuffix(got, "(200000 bytes) y") {
		t.Errorf("Bound lost the text around a value: %.300s", got)
	}
}

func TestRedactor_MasksRegisteredSecrets(t *testing.T) {
	var r Redactor
	r.Add("Bearer hunter22", "abc", "hunter22", "seven77")
	got := r.String("sent Authorization: Bearer hunter22 and hunter22 again; abc and seven77 stay")
	if strings.Contains(got, "hunter22") || !strings.Contains(got, "abc and seven77 stay") {
		t.Fatalf("String = %q", got)
	}
	var nilR *Redactor
	nilR.Add("x")
	if nilR.String("http://h/?a=b") != "http://h/?a=REDACTED" {
		t.Fatalf("a nil Redactor must still apply the URL rule")
	}
}

func TestHandler_RedactsEveryTextValue(t *testing.T) {
	var buf bytes.Buffer
	r := &Redactor{}
	r.Add("hunter22")
	log := slog.New(Handler(slog.NewJSONHandler(&buf, nil), r)).With("url", "http://h/?t=hunter22")
	log.Error("failed at http://u:hunter22@h/", "error", errors.New("key hunter22"),
		slog.Group("g", "v", "hunter22"), "n", 3)
	if strings.Contains(buf.String(), "hunter22") {
		t.Fatalf("log line kept a secret: %s", buf.String())
	}
	if !strings.Contains(buf.String(), `"n":3`) {
		t.Fatalf("non-text values must pass as they are: %s", buf.String())
	}
}

// FuzzText: Text and URL never panic, and a secret in a URL's user-info or
// query never survives, whatever text surrounds the URL (docs/security.md).
func FuzzText(f *testing.F) {
	f.Add("err: ", "host:80", "user", "pw", "token", "abc", " tail")
	f.Add(`Post "`, "h", "", "x", "a", "b", `": refused`)
	f.Add("", "h@x", "u@", "p:q", "k", "v&w", "#x")
	f.Add("x://a", "h", "u", "p", "k", "v", "")
	f.Add("x://a/?q=", "h", "u", "p", "k", "v", "://")
	f.Fuzz(func(t *testing.T, prefix, host, user, pw, key, val, suffix string) {
		const mark = "ZQXJ"
		clean := func(s string) string {
			// A secret inside a URL is one token: it cannot hold a
			// delimiter of the URL's own syntax or of the text around it.
			return strings.Map(func(r rune) rune {
				if isURLEnd(r) || strings.ContainsRune("@/?#&;=:", r) || r == 0xFFFD {
					return -1
				}
				return r
			}, s)
		}
		prefix = strings.ReplaceAll(prefix, mark, "")
		suffix = strings.ReplaceAll(suffix, mark, "")
		host = strings.ReplaceAll(clean(host), mark, "")
		secretUser := mark + "U" + clean(user)
		secretPw := mark + "P" + clean(pw)
		secretVal := mark + "V" + clean(val)
		key = clean(key)
		if Kept[key] {
			key = "k" + key
		}
		u := "http://" + secretUser + ":" + secretPw + "@" + host + "/p?" + key + "=" + secretVal
		for _, got := range []string{Text(prefix + u + suffix), URL(u), Text(u), Endpoint(u)} {
			if strings.Contains(got, mark) {
				t.Fatalf("secret survived: %q", got)
			}
		}
		_ = URL(prefix + suffix)
		_ = Text(prefix + suffix)
		_ = Endpoint(prefix + suffix)
		_ = URLSecrets(prefix + u + suffix)
		_ = Quote(prefix)
		_ = Cut(prefix)
	})
}

// TestRedactor_MasksEverySecretWhateverTheOrderAdded: secrets added in
// any order, the shorter first, are masked whole: a password that holds
// the user name leaves no tail, and two secrets that overlap in the text
// leave no part of either.
func TestRedactor_MasksEverySecretWhateverTheOrderAdded(t *testing.T) {
	const user, pw = "svc-admin-01", "svc-admin-01-Pa55w0rd-tail"
	const left, right = "abcdefgh-1234", "1234-ijklmnop" // overlap on "1234"
	for _, order := range [][]string{
		{user, pw, left, right},
		{right, user, left, pw},
		{left, right, pw, user},
	} {
		var r Redactor
		for _, s := range order {
			r.Add(s)
		}
		got := r.String("login " + pw + " as " + user + "; key abcdefgh-1234-ijklmnop; done")
		for _, part := range []string{"Pa55w0rd", "tail", "svc-admin", "abcdefgh", "ijklmnop", "1234"} {
			if strings.Contains(got, part) {
				t.Errorf("added as %q: %q survived in %q", order, part, got)
			}
		}
		if !strings.HasPrefix(got, "login REDACTED as REDACTED; key REDACTED; done") {
			t.Errorf("added as %q: String = %q", order, got)
		}
	}
}

// TestRedactor_IncludesAnotherRedactorsSecrets: a Redactor that includes
// another masks that one's secrets too, including those added after the
// include, and overlapping secrets of the two are masked whole.
func TestRedactor_IncludesAnotherRedactorsSecrets(t *testing.T) {
	var run, own Redactor
	own.Add("handler-env-token-1")
	own.Include(&run)
	own.Include(&own) // harmless
	run.Include(&own) // a cycle is harmless too
	run.Add("aws-secret-key-xyz", "token-1-and-more")
	got := own.String("env handler-env-token-1-and-more and aws-secret-key-xyz")
	if got != "env REDACTED and REDACTED" {
		t.Fatalf("String = %q", got)
	}
}

// TestURLSecrets_UserInfoPathQueryRawAndDecoded: every part of a URL
// the rule hides is a secret, as written and percent-decoded: the user
// name and password (a password that holds the user name too), the
// path and its token-like segments, query values; a URL that net/url
// refuses gives them as well.
func TestURLSecrets_UserInfoPathQueryRawAndDecoded(t *testing.T) {
	got := URLSecrets("https://svc-user:svc-user%40Pa55@hooks.example:8443/services/T0001234/XyZtokenXyZtokenXyZ?sig=a%2Bbcdefghij&group=g1#frag-ment")
	for _, want := range []string{
		"svc-user", "svc-user%40Pa55", "svc-user@Pa55", "svc-user:svc-user%40Pa55",
		"services/T0001234/XyZtokenXyZtokenXyZ", "T0001234", "XyZtokenXyZtokenXyZ",
		"a%2Bbcdefghij", "a+bcdefghij", "frag-ment",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("URLSecrets lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"services", "g1", "hooks.example:8443"} {
		if slices.Contains(got, not) {
			t.Errorf("URLSecrets has %q, which is no secret: %q", not, got)
		}
	}
	// A path of one word is no secret: it would be masked in every line
	// (a lint finding's "6 messages" printed "6 REDACTED"); one of one
	// token-like segment is.
	if got := URLSecrets("http://payments-handler.default.svc:8080/messages"); len(got) != 0 {
		t.Errorf("a one-word path: URLSecrets = %q, want nothing", got)
	}
	if got := URLSecrets("https://hooks.example/XyZtokenXyZtokenXyZ"); !slices.Contains(got, "XyZtokenXyZtokenXyZ") {
		t.Errorf("a one-token path: URLSecrets = %q, want the token", got)
	}
	var r Redactor
	r.Add(URLSecrets("http://h:8080/messages")...)
	if got := r.String("a performer may hold 6 messages"); got != "a performer may hold 6 messages" {
		t.Errorf("a one-word path's word masked in other text: %q", got)
	}
	if got := URLSecrets("http://admin:pa%zzword-1@h/"); !slices.Contains(got, "pa%zzword-1") {
		t.Errorf("a URL net/url refuses: URLSecrets = %q, want its password", got)
	}
}

// TestEndpoint_MasksThePathKeepingSchemeHostAndPort: an http handler's
// endpoint is shown with its path masked (webhooks carry their token in
// it) and user-info and query values as URL masks them.
func TestEndpoint_MasksThePathKeepingSchemeHostAndPort(t *testing.T) {
	cases := map[string]string{
		"https://hooks.example/services/T000/tokXYZ":             "https://hooks.example/REDACTED",
		"http://u:pw@hooks.example:8080/services/T000/tok?k=v#f": "http://REDACTED@hooks.example:8080/REDACTED?k=REDACTED#REDACTED",
		"https://hooks.example/":                                 "https://hooks.example/",
		"https://hooks.example":                                  "https://hooks.example",
		"https://hooks.example?k=v":                              "https://hooks.example?k=REDACTED",
		"/no/scheme?k=v":                                         "/no/scheme?k=REDACTED",
	}
	for in, want := range cases {
		if got := Endpoint(in); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

package local_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/local"
)

// parse writes files (name -> content; a name ending in * is made
// executable, the * dropped) into a new directory, then parses yaml as
// that directory's b.yaml, so its relative paths are relative there.
func parse(t *testing.T, yaml string, files map[string]string) *config.File {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		mode := os.FileMode(0o644)
		if n, ok := strings.CutSuffix(name, "*"); ok {
			name, mode = n, 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	f, err := config.Parse(filepath.Join(dir, "b.yaml"), []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

// httpSub is an http handler whose handler.tls block is tls (YAML lines
// indented by eight spaces), its key on line 7.
func httpSub(tls string) string {
	return "subscriptions:\n  - name: orders\n    transport: memory\n    handler:\n      type: http\n      url: https://localhost:1/h\n      tls:\n" + tls
}

// keyPair returns a self-signed certificate and its key, PEM-encoded.
func keyPair(t *testing.T) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "brighter-lint-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}

func execSub(command string) string {
	return "subscriptions:\n  - name: orders\n    transport: memory\n    handler:\n      type: exec\n      command: " + command + "\n"
}

func seedSub(seed string) string {
	return "subscriptions:\n  - name: orders\n    transport: memory\n    handler: {type: builtin, name: ack}\n    memory:\n      seed: " + seed + "\n"
}

const record = `{"id":"m1","topic":"orders","messageType":"MT_EVENT","body":"hello"}` + "\n"

// TestCheck_WhatConsumeRefusesToStart: an exec handler's command that
// cannot be run, an http handler's tls files that cannot be loaded, and a
// seed file that is missing or does not load are findings at the field's
// key; what consume would start with is not, a
// relative path being taken from the subscriptions file's directory.
func TestCheck_WhatConsumeRefusesToStart(t *testing.T) {
	cert, key := keyPair(t)
	_, otherKey := keyPair(t)
	for _, tc := range []struct {
		name     string
		yaml     string
		files    map[string]string
		rule     string // "" for no finding
		contains []string
		line     int
	}{
		{name: "a missing command", yaml: execSub("./nosuch.sh"), rule: lint.RuleHandlerCommandNotFound,
			contains: []string{`handler.command "`, `nosuch.sh" cannot be run: no such file or directory;`, "no such file or directory"}, line: 6},
		{name: "a command that is not executable", yaml: execSub("./handle.sh"), files: map[string]string{"handle.sh": "#!/bin/sh\n"},
			rule: lint.RuleHandlerCommandNotFound, contains: []string{"permission denied"}, line: 6},
		{name: "a bare name not on PATH", yaml: execSub("brighter-no-such-handler"), rule: lint.RuleHandlerCommandNotFound,
			contains: []string{`"brighter-no-such-handler" cannot be run: no executable file of that name on PATH`}, line: 6},
		{name: "a script whose interpreter is missing", yaml: execSub("./handle.sh"), files: map[string]string{"handle.sh*": "#!/usr/bin/python9\n"},
			rule: lint.RuleHandlerCommandNotFound, contains: []string{`handle.sh" cannot be run: its #! line names interpreter "/usr/bin/python9": no such file or directory;`}, line: 6},
		{name: "a script whose env-style interpreter is not on PATH", yaml: execSub("./handle.sh"), files: map[string]string{"handle.sh*": "#!/usr/bin/env python9\n"},
			rule: lint.RuleHandlerCommandNotFound, contains: []string{`its #! line runs "python9" through /usr/bin/env: no executable file of that name on PATH`}, line: 6},
		{name: "a script whose env-style interpreter is not on the PATH handler.env gives it",
			yaml: execSub("./handle.sh") + "      env: {PATH: /nonexistent}\n", files: map[string]string{"handle.sh*": "#!/usr/bin/env sh\n"},
			rule: lint.RuleHandlerCommandNotFound, contains: []string{`its #! line runs "sh" through /usr/bin/env`}, line: 6},
		{name: "an executable beside the file", yaml: execSub("./handle.sh"), files: map[string]string{"handle.sh*": "#!/bin/sh\n"}},
		{name: "a script whose env-style interpreter is on PATH", yaml: execSub("./handle.sh"), files: map[string]string{"handle.sh*": "#!/usr/bin/env sh\n"}},
		{name: "a bare name on PATH", yaml: execSub("sh")},
		{name: "a missing tls caFile", yaml: httpSub("        caFile: ca.pem\n"), rule: lint.RuleHandlerTLSUnreadable,
			contains: []string{"tls ca file", "ca.pem", "no such file or directory", "consume refuses"}, line: 7},
		{name: "a caFile with no certificate", yaml: httpSub("        caFile: ca.pem\n"), files: map[string]string{"ca.pem": "not a certificate\n"},
			rule: lint.RuleHandlerTLSUnreadable, contains: []string{"no PEM certificates found"}, line: 7},
		{name: "a certificate and a key that are not a pair", yaml: httpSub("        certFile: c.pem\n        keyFile: k.pem\n"),
			files: map[string]string{"c.pem": cert, "k.pem": otherKey}, rule: lint.RuleHandlerTLSUnreadable,
			contains: []string{"tls client certificate", "private key does not match public key"}, line: 7},
		{name: "tls files that load", yaml: httpSub("        caFile: c.pem\n        certFile: c.pem\n        keyFile: k.pem\n"),
			files: map[string]string{"c.pem": cert, "k.pem": key}},
		{name: "a missing seed", yaml: seedSub("nosuch.jsonl"), rule: lint.RuleMemorySeedInvalid,
			contains: []string{"nosuch.jsonl", "no such file or directory"}, line: 6},
		{name: "a seed that does not parse", yaml: seedSub("in.jsonl"), files: map[string]string{"in.jsonl": record + "{not json\n"},
			rule: lint.RuleMemorySeedInvalid, contains: []string{"line 2"}, line: 6},
		{name: "a seed that is a directory", yaml: seedSub("."), rule: lint.RuleMemorySeedInvalid, contains: []string{"is a directory"}, line: 6},
		{name: "a seed that loads", yaml: seedSub("in.jsonl"), files: map[string]string{"in.jsonl": record + "\n" + record}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := local.Check(context.Background(), parse(t, tc.yaml, tc.files))
			if tc.rule == "" {
				if len(fs) != 0 {
					t.Fatalf("findings %+v, want none", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].RuleID != tc.rule {
				t.Fatalf("findings %+v, want one of %s", fs, tc.rule)
			}
			f := fs[0]
			// An error, as consume's refusal (exit 2) is.
			want := lint.SeverityError
			if r, _ := lint.Lookup(tc.rule); f.Severity != want || r.Severity != want {
				t.Errorf("severity %s (rule %s), want %s", f.Severity, r.Severity, want)
			}
			if f.Pos.Line != tc.line || f.Pos.Column != 7 || !strings.HasSuffix(f.Pos.File, "b.yaml") {
				t.Errorf("position %s, want b.yaml:%d:7", f.Pos, tc.line)
			}
			for _, s := range tc.contains {
				if !strings.Contains(f.Message, s) {
					t.Errorf("message %q does not say %q", f.Message, s)
				}
			}
		})
	}
}

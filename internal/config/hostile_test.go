package config_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// hostileCorpus maps each file of testdata/hostile to the error text it must
// produce ("" = it must parse). A hostile file gets a clear error
// naming the file, the line and the limit or rule, in bounded time and
// memory, and never a panic.
var hostileCorpus = map[string]string{
	"bom.yaml":                  "",
	"only-bom.yaml":             ":1:1: the file is empty",
	"deep-block.yaml":           ":33:65: mappings and sequences nest deeper than the limit of 32 levels here",
	"deep-dashes.yaml":          ":2:65: mappings and sequences nest deeper than the limit of 32 levels here",
	"deep-flow.yaml":            ":1:47: mappings and sequences nest deeper than the limit of 32 levels here",
	"deep-flow-unclosed.yaml":   ":1:95: mappings and sequences nest deeper than the limit of 32 levels here",
	"nul-escape-name.yaml":      `:2:5: subscriptions[0].name: "orders\x00evil": a name must not hold a control character; U+0000 is not allowed`,
	"nul-byte-name.yaml":        `:2:5: subscriptions[0].name: "orders\x00evil": a name must not hold a control character; U+0000 is not allowed`,
	"control-char-channel.yaml": `:3:5: subscriptions[0].channelName: "a\ab": a name must not hold a control character; U+0007 is not allowed`,
	"sqs-long-queue.yaml":       `an SQS queue name is at most 80 characters; this one would be 81 (brighter does not cut names short)`,
	"sqs-fifo-long-queue.yaml":  `an SQS queue name is at most 80 characters with ".fifo"; this one would be 81`,
	"sqs-bad-char.yaml":         `:3:5: subscriptions[0].channelName: "orders/dlq": an SQS queue name may hold only letters, digits, '-', '_' and '.' (which becomes '_'); '/' is not allowed`,
	"gcp-short-name.yaml":       `:3:5: subscriptions[0].channelName: "ab": a Pub/Sub topic or subscription id is 3 to 255 characters; this one is 2`,
	"gcp-goog-name.yaml":        `:3:5: subscriptions[0].routingKey: "google-topic": a Pub/Sub topic or subscription id must not start with "goog"`,
	"rocketmq-dot-topic.yaml":   `:4:5: subscriptions[0].channelName: "orders.created": a RocketMQ topic may hold only letters, digits, '-', '_', '%' and '|'; '.' is not allowed`,
	"binary-garbage.yaml":       ":1:1: must be a mapping (key: value), got a string",
	"alias-bomb.yaml":           "9901 more problems from here on are not listed",
	"billion-laughs.yaml":       "subscriptions[0]: must be a mapping (key: value), got a list",
	"alias-expansion.yaml":      ":169:10: subscriptions[166]: aliases and merge keys bring in more than 1000000 nodes here, the limit for a subscriptions file",
	"merge-chain.yaml":          ":3:14: subscriptions[33]: merge keys (<<) nest deeper than the limit of 32 levels here",
	// The same limits hold for what top-level extension fields (x-) hold:
	// the decoder reads none of them, but aliases and merge keys into them
	// are charged as they are used, and nesting, tokens and size are the
	// file's. An alias bomb no subscription uses expands nothing.
	"x-alias-expansion.yaml": ":169:10: subscriptions[166]: aliases and merge keys bring in more than 1000000 nodes here, the limit for a subscriptions file (an alias bomb?)",
	"x-billion-laughs.yaml":  ":7:9: subscriptions[0]: must be a mapping (key: value), got a list",
	"x-merge-chain.yaml":     ":10:16: subscriptions[0]: merge keys (<<) nest deeper than the limit of 32 levels here; is an anchor referring to itself?",
	"x-deep.yaml":            ":33:65: mappings and sequences nest deeper than the limit of 32 levels here",
	"x-unused-laughs.yaml":   "",
}

func TestHostileFilesGetClearErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "hostile", "*.yaml"))
	if err != nil || len(files) != len(hostileCorpus) {
		t.Fatalf("testdata/hostile holds %d files (%v), the table %d: keep them in step", len(files), err, len(hostileCorpus))
	}
	for _, path := range files {
		want := hostileCorpus[filepath.Base(path)]
		f, err := config.Load(path, func(string) (string, bool) { return "", false })
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v, want it to parse", path, err)
			}
			continue
		}
		var es config.Errors
		if !errors.As(err, &es) || !strings.Contains(err.Error(), path+want) && !strings.Contains(err.Error(), want) {
			t.Errorf("internal/config/%s:\n got %v\nwant %s%s", filepath.ToSlash(path), err, path, want)
		}
		if f != nil {
			t.Errorf("%s: a file with errors returned a *File", path)
		}
		if len(es) > config.MaxErrors+1 {
			t.Errorf("%s: %d errors listed, want at most %d", path, len(es), config.MaxErrors+1)
		}
	}
	// The BOM is stripped: the first key is connections, not "\ufeffconnections".
	f, err := config.Load(filepath.Join("testdata", "hostile", "bom.yaml"), nil)
	if err != nil || len(f.Subscriptions) != 1 || f.Subscriptions[0].Name != "orders" {
		t.Fatalf("bom.yaml: %v", err)
	}
}

// A file over MaxFileSize is refused before anything else reads it, naming
// the line the limit falls on; so is one whose pre-scan counts more than
// MaxPreScan, before the lexer keeps a token of it (it allocates less than
// a megabyte; MaxTokens itself is TestTokenLimitAtTheTokenOverIt's). A
// value over MaxScalarSize is refused at its position; one of exactly
// MaxScalarSize is not refused by that limit. Nesting deeper
// than MaxNestingDepth is refused at the first token too deep; depth at the
// limit is accepted.
func TestSizeTokenValueAndDepthLimits(t *testing.T) {
	over := "subscriptions: []\n# " + strings.Repeat("x", config.MaxFileSize) + "\n"
	if _, err := config.Parse("big.yaml", []byte(over), nil); err == nil || !strings.Contains(err.Error(), "big.yaml:2:1: the file is 16777237 bytes, over the limit of 16777216 bytes (16 MiB) for a subscriptions file") {
		t.Errorf("16 MiB comment: %v", err)
	}
	for name, src := range map[string]string{
		"16 MiB of [": "subscriptions: " + strings.Repeat("[", config.MaxFileSize-16),
		"1,500,001 flow items (3,000,002 tokens)": "subscriptions: [" + strings.Repeat("a,", config.MaxPreScan/2) + "]",
	} {
		var err error
		data := []byte(src)
		if alloc := allocated(func() { _, err = config.Parse("many.yaml", data, nil) }); alloc > 1<<20 {
			t.Errorf("%s: refusing it allocated %d bytes, want it refused before the lexer runs", name, alloc)
		}
		if err == nil || !strings.Contains(err.Error(), "many.yaml:1:") || !strings.Contains(err.Error(), ": the file has more than 3000000 words and punctuation marks, over three times the limit of 1000000 YAML tokens for a subscriptions file") {
			t.Errorf("%s: %v", name, err)
		}
	}
	value := func(n int) string {
		return "subscriptions:\n  - name: orders\n    transport: memory\n    handler: {type: builtin, name: ack}\n    channelName: " + strings.Repeat("n", n) + "\n"
	}
	if _, err := config.Parse("value.yaml", []byte(value(config.MaxScalarSize+1)), nil); err == nil || !strings.Contains(err.Error(), "value.yaml:5:18: a value of 1048577 bytes starts here, over the limit of 1048576 bytes (1 MiB) for one value") {
		t.Errorf("a value of 1 MiB + 1: %v", err)
	}
	if _, err := config.Parse("value.yaml", []byte(value(config.MaxScalarSize)), nil); err == nil || strings.Contains(err.Error(), "for one value") || !strings.Contains(err.Error(), "a name is at most 255 characters; this one is 1048576") {
		t.Errorf("a value of 1 MiB: %v, want it refused by the name rule, not the value limit", err)
	}
	deep := "subscriptions: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	if _, err := config.Parse("deep.yaml", []byte(deep), nil); err == nil || !strings.Contains(err.Error(), "deep.yaml:1:47: mappings and sequences nest deeper than the limit of 32") {
		t.Errorf("depth 100,000: %v", err)
	}
	// Depth exactly at the limit is accepted by the limit (and then judged
	// by the schema).
	ok := "subscriptions:\n  - name: orders\n    transport: memory\n    handler: {type: builtin, name: ack}\n    memory: {seed: x}\n"
	if _, err := config.Parse("ok.yaml", []byte(ok), nil); err != nil && strings.Contains(err.Error(), "nest deeper") {
		t.Errorf("a real file hit the depth limit: %v", err)
	}
	atLimit := "a: " + strings.Repeat("[", config.MaxNestingDepth-1) + strings.Repeat("]", config.MaxNestingDepth-1)
	if _, err := config.Parse("limit.yaml", []byte(atLimit), nil); err != nil && strings.Contains(err.Error(), "nest deeper") {
		t.Errorf("depth %d refused: %v", config.MaxNestingDepth, err)
	}
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkParseHostile measures hostile files at each limit, so
// docs/performance.md can record that each is refused in bounded time and
// memory, next to the largest file the limits accept (parsed) and a
// 10,000-subscription honest file. One op = one config.Parse.
func BenchmarkParseHostile(b *testing.B) {
	// The flat file: one-line subscriptions, 22 tokens each, up to
	// MaxTokens.
	flat := &bytes.Buffer{}
	flat.WriteString("subscriptions:\n")
	for i := 0; (i+1)*22 < config.MaxTokens; i++ {
		flat.WriteString("  - {name: s" + strconv.Itoa(i) + ", transport: memory, handler: {type: builtin, name: ack}}\n")
	}
	// The hostile files the pre-scan lets through to the lexer are at
	// most MaxPreScan tokens.
	preScan := config.MaxPreScan - 100
	// want is a text of the error each case must end with ("" = parsed),
	// so that a limit that moves fails the benchmark instead of measuring
	// something else.
	cases := []struct{ name, src, want string }{
		{"17MiB-refused-by-size", strings.Repeat("[", config.MaxFileSize+1<<20), "over the limit of 16777216 bytes"},
		{"16MiB-nested-flow-refused-by-prescan", "subscriptions: " + strings.Repeat("[", config.MaxFileSize-16), "words and punctuation marks"},
		{"3M-nested-flow-refused-by-depth", "subscriptions: " + strings.Repeat("[", preScan/2) + strings.Repeat("]", preScan/2), "nest deeper"},
		{"3M-dashes-refused-by-depth", strings.Repeat("- ", preScan), "nest deeper"},
		{"3M-flow-items-refused-by-tokens", "subscriptions: [" + strings.Repeat("a,", preScan/2) + "]", "more than 1000000 YAML tokens"},
		{"15MiB-value-refused-by-value-size", "subscriptions: '" + strings.Repeat("v", 15<<20) + "'", "for one value"},
		{"alias-expansion-refused-by-aliases", mustRead(b, filepath.Join("testdata", "hostile", "alias-expansion.yaml")), "bring in more than 1000000 nodes"},
		{"1M-tokens-flat-parsed", flat.String(), ""},
		{"10k-honest-parsed", string(honestFile(10000)), ""},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			data := []byte(c.src)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var err error
			for b.Loop() {
				_, err = config.Parse("h.yaml", data, nil)
			}
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				b.Fatalf("got %.300v, want %q", err, c.want)
			}
		})
	}
}

func mustRead(b *testing.B, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

// honestFile is a subscriptions file of n SQS subscriptions as a team
// writes one: the first is anchored, and each of the others merges it
// (<<: *defaults) and names its own queue, dead-letter queue and redrive
// queue.
func honestFile(n int) []byte {
	var b bytes.Buffer
	b.WriteString("subscriptions:\n  - &defaults\n    name: orders-0\n    transport: sqs\n    requeueCount: 3\n    bufferSize: 10\n    deadLetterRoutingKey: orders-0-dlq\n    handler: {type: exec, command: ./handle, timeout: 20s}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - <<: *defaults\n    name: orders-%d\n    channelName: orders-%d\n    deadLetterRoutingKey: orders-%d-dlq\n    sqs: {redrivePolicy: {deadLetterQueue: orders-%d-redrive, maxReceiveCount: 5}}\n", i, i, i, i)
	}
	return b.Bytes()
}

// A file of 10,000 subscriptions that each merge a block of defaults
// decodes: no limit (size, tokens, aliases and merge keys) refuses a large
// honest file. It is over the 256 KiB the decoder once refused, and its
// 9,999 merge keys and their aliases are over the 10,000 alias resolutions
// it once allowed.
func TestTenThousandSubscriptionsDecode(t *testing.T) {
	data := honestFile(10000)
	if len(data) <= 256<<10 {
		t.Fatalf("the generated file is %d bytes; it must be over 256 KiB to test anything", len(data))
	}
	f, err := config.Parse("honest.yaml", data, nil)
	if err != nil {
		t.Fatalf("a %d-byte file of 10,000 subscriptions was refused: %v", len(data), err)
	}
	if len(f.Subscriptions) != 10000 {
		t.Fatalf("%d subscriptions decoded, want 10,000", len(f.Subscriptions))
	}
	last := f.Subscriptions[9999]
	if last.Name != "orders-9999" || last.Transport != config.TransportSQS || last.RequeueCount != 3 || last.Handler.Command != "./handle" || last.DeadLetterRoutingKey != "orders-9999-dlq" {
		t.Errorf("the last subscription did not merge its defaults: %+v", last)
	}
}

package config_test

import (
	"bytes"
	"errors"
	"path/filepath"
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
			t.Errorf("%s:\n got %v\nwant %s%s", path, err, path, want)
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

// A file over MaxFileSize is refused before it is parsed, naming
// the line the limit falls on; a name of a megabyte is one of them. Real
// sizes and depths up to the limits parse.
func TestSizeAndDepthLimits(t *testing.T) {
	huge := "subscriptions:\n  - name: orders\n    transport: memory\n    handler: {type: builtin, name: ack}\n    channelName: " + strings.Repeat("n", 1<<20) + "\n"
	_, err := config.Parse("big.yaml", []byte(huge), nil)
	if err == nil || !strings.Contains(err.Error(), "big.yaml:5:1: the file is 1048688 bytes, over the limit of 262144 bytes (256 KiB)") {
		t.Errorf("1 MB name: %v", err)
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

// BenchmarkParseHostile measures a 1 MB hostile file (refused by size), a
// file of the largest accepted size nested as deep as it can be (refused by
// depth after the linear lexer) and a file of the largest accepted size that
// is flat (parsed), so docs/performance.md can record that hostile input is
// refused in bounded time and memory.
func BenchmarkParseHostile(b *testing.B) {
	flat := &bytes.Buffer{}
	flat.WriteString("subscriptions:\n")
	for i := 0; flat.Len() < config.MaxFileSize-200; i++ {
		flat.WriteString("  - {name: s" + strings.Repeat("x", 8) + strconv.Itoa(i) + ", transport: memory, handler: {type: builtin, name: ack}}\n")
	}
	cases := []struct{ name, src string }{
		{"1MB-nested-flow-refused-by-size", "subscriptions: " + strings.Repeat("[", 1<<19) + strings.Repeat("]", 1<<19)},
		{"256KiB-nested-flow-refused-by-depth", "subscriptions: " + strings.Repeat("[", config.MaxFileSize/2-8) + strings.Repeat("]", config.MaxFileSize/2-8)},
		{"256KiB-dashes-refused-by-depth", strings.Repeat("- ", config.MaxFileSize/2)},
		{"256KiB-flat-parsed", flat.String()},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			data := []byte(c.src)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = config.Parse("h.yaml", data, nil)
			}
		})
	}
}

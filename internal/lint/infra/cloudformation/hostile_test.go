package cloudformation

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// hostileCorpus maps each file of testdata/infra/cloudformation/hostile to
// the error it must be refused with: clearly, at a position, in bounded
// time and memory, never with a panic.
var hostileCorpus = map[string]string{
	"getatt-loop.yaml":     "getatt-loop.yaml:5:18: Resources.A.Properties.QueueName: Fn::GetAtt B.QueueName is part of a loop: QueueName properties refer to each other",
	"billion-laughs.yaml":  "Resources.Q.Properties.QueueName: aliases and merge keys bring in more than 1000000 nodes here, the limit for a file (an alias bomb?)",
	"alias-self.yaml":      "alias-self.yaml:5:30: Resources.Q.Properties.QueueName: intrinsic functions nest deeper than the limit of 64 levels here (a reference loop?)",
	"deep-intrinsics.yaml": "Resources.Q.Properties.QueueName: intrinsic functions nest deeper than the limit of 64 levels here",
	"deep-nesting.json":    "deep-nesting.json:1:248: mappings and sequences nest deeper than the limit of 32 levels here",
}

// maxHostileAlloc bounds what refusing one hostile file may allocate: the
// bound of a subscriptions file, whose worst refusal (an alias expansion
// stopped by the alias budget) allocates 289 MB (docs/performance.md).
const maxHostileAlloc = 300 << 20

func TestRead_RefusesHostileTemplatesCleanly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpus, "hostile", "*"))
	if err != nil || len(files) != len(hostileCorpus) {
		t.Fatalf("hostile holds %d files (%v), the table %d: keep them in step", len(files), err, len(hostileCorpus))
	}
	for _, path := range files {
		name := filepath.Base(path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got error
		alloc := allocated(func() { _, got = Read(name, data) })
		if got == nil {
			t.Errorf("%s: read without error", name)
			continue
		}
		errorsOf(t, got)
		if !strings.Contains(got.Error(), hostileCorpus[name]) {
			t.Errorf("%s:\n got %v\nwant %s", name, got, hostileCorpus[name])
		}
		if alloc > maxHostileAlloc {
			t.Errorf("%s: refusing it allocated %d bytes, over %d", name, alloc, maxHostileAlloc)
		}
	}
}

// A template over the file size limit, or holding more tokens than the
// pre-scan allows, is refused before the YAML lexer keeps a token of it.
func TestRead_RefusesHugeTemplatesBeforeParsing(t *testing.T) {
	for name, src := range map[string]string{
		"17 MiB":           "Resources: {}\n# " + strings.Repeat("x", config.MaxFileSize) + "\n",
		"3,000,002 tokens": `{"Resources": {}, "Metadata": [` + strings.Repeat("1,", config.MaxPreScan/2) + "1]}",
	} {
		data := []byte(src)
		var err error
		if alloc := allocated(func() { _, err = Read("big.json", data) }); alloc > 1<<20 {
			t.Errorf("%s: refusing it allocated %d bytes", name, alloc)
		}
		if err == nil || !strings.Contains(err.Error(), "big.json:") || !strings.Contains(err.Error(), "over") || !strings.Contains(err.Error(), "for a file brighter reads") {
			t.Errorf("%s: %v", name, err)
		}
		if Detect(data) {
			t.Errorf("%s: detected as a template", name)
		}
	}
}

func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// FuzzRead: any input is read or refused with config errors, never a
// panic; every resource read has a position in the file.
func FuzzRead(f *testing.F) {
	// The slow hostile files (billion laughs, deep intrinsics) are
	// TestRead_RefusesHostileTemplatesCleanly's; the fuzzer starts from
	// the honest corpus and the quick loops.
	files, _ := filepath.Glob(filepath.Join(corpus, "*.*"))
	files = append(files, filepath.Join(corpus, "hostile", "getatt-loop.yaml"), filepath.Join(corpus, "hostile", "alias-self.yaml"))
	{
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      RedrivePolicy: !Sub '{\"maxReceiveCount\": ${N}}'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := Read("f.yaml", data)
		Detect(data)
		if err != nil {
			errorsOf(t, err)
			return
		}
		for _, r := range rs {
			if !r.Pos.IsValid() || r.Pos.File != "f.yaml" || r.Address == "" {
				t.Fatalf("resource %+v without a position or address", r)
			}
		}
	})
}

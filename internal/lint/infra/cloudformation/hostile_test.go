package cloudformation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra/infratest"
)

// hostileCorpus maps each file of testdata/infra/cloudformation/hostile to
// the error it must be refused with: clearly, at a position, in bounded
// time and memory, never with a panic.
var hostileCorpus = map[string][]string{
	"getatt-loop.yaml":     {"getatt-loop.yaml:5:18: Resources.A.Properties.QueueName: Fn::GetAtt B.QueueName is part of a loop: QueueName properties refer to each other"},
	"billion-laughs.yaml":  {"Resources.Q.Properties.QueueName: aliases and merge keys bring in more than 1000000 nodes here, the limit for a file (an alias bomb?)"},
	"alias-self.yaml":      {"alias-self.yaml:5:30: Resources.Q.Properties.QueueName: intrinsic functions nest deeper than the limit of 64 levels here (a reference loop?)"},
	"deep-intrinsics.yaml": {"Resources.Q.Properties.QueueName: intrinsic functions nest deeper than the limit of 64 levels here"},
	"deep-nesting.json":    {"deep-nesting.json:1:248: mappings and sequences nest deeper than the limit of 32 levels here"},
}

func TestRead_RefusesHostileTemplatesCleanly(t *testing.T) {
	infratest.RefusesHostile(t, format, filepath.Join(corpus, "hostile"), hostileCorpus)
}

// A template over the file size limit, or holding more tokens than the
// pre-scan allows, is refused before the YAML lexer keeps a token of it.
func TestRead_RefusesHugeTemplatesBeforeParsing(t *testing.T) {
	infratest.RefusesHuge(t, format, "big.json", map[string]string{
		"17 MiB":           "Resources: {}\n# " + strings.Repeat("x", config.MaxFileSize) + "\n",
		"3,000,002 tokens": `{"Resources": {}, "Metadata": [` + strings.Repeat("1,", config.MaxPreScan/2) + "1]}",
	}, "over")
}

// FuzzRead: any input is read or refused with config errors, never a
// panic; every resource read has a position in the file.
func FuzzRead(f *testing.F) {
	// The slow hostile files (billion laughs, deep intrinsics) are
	// TestRead_RefusesHostileTemplatesCleanly's; the fuzzer starts from
	// the honest corpus and the quick loops.
	files, _ := filepath.Glob(filepath.Join(corpus, "*.*"))
	files = append(files, filepath.Join(corpus, "hostile", "getatt-loop.yaml"), filepath.Join(corpus, "hostile", "alias-self.yaml"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      RedrivePolicy: !Sub '{\"maxReceiveCount\": ${N}}'\n"))
	infratest.Fuzz(f, format)
}

package config_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"

	"github.com/brightergo/brighter/internal/config"
)

// TestSchemaAgreesWithDecoder: the JSON Schema that `brighter schema` prints
// and editors use accepts exactly the subscriptions files the decoder
// accepts, for every YAML file of examples/ and testdata/ and every YAML
// file inside the CLI's testscripts (valid files valid, invalid files
// invalid).
func TestSchemaAgreesWithDecoder(t *testing.T) {
	sch := compileSchema(t)
	files := collectYAML(t, "../../examples", "../../testdata")
	if len(files) < 30 {
		t.Fatalf("found only %d YAML files under examples/ and testdata/; the walk is broken", len(files))
	}
	valid, invalid := 0, 0
	for _, f := range files {
		_, derr := config.Parse(f.name, f.data, scriptEnv)
		serr := validate(sch, f.data)
		switch {
		case derr == nil && serr != nil:
			t.Errorf("%s: the decoder accepts it but the schema refuses it:\n%v", f.name, serr)
		case derr != nil && serr == nil:
			t.Errorf("%s: the schema accepts it but the decoder refuses it:\n%v", f.name, derr)
		case derr == nil:
			valid++
		default:
			invalid++
		}
	}
	// Both kinds must be exercised, or the test proves half of nothing.
	if valid == 0 || invalid == 0 {
		t.Fatalf("%d valid and %d invalid files: want both", valid, invalid)
	}
	t.Logf("%d files agree: %d valid, %d invalid", len(files), valid, invalid)
}

// TestSchemaRefusesWhatTheDecoderRefuses checks the schema's x- keywords and
// cross-field rules on files made to break them: each must be refused by
// both.
func TestSchemaRefusesWhatTheDecoderRefuses(t *testing.T) {
	sch := compileSchema(t)
	base := "subscriptions:\n  - name: a\n    transport: %s\n    handler: {type: builtin, name: ack}\n%s"
	cases := map[string]string{
		"sqs timeOut above 20s":           fmt.Sprintf(base, "sqs", "    timeOut: 21s\n"),
		"sqs requeueDelay above 12h":      fmt.Sprintf(base, "sqs", "    requeueDelay: 13h\n"),
		"visibilityTimeout above 12h":     fmt.Sprintf(base, "sqs", "    sqs: {visibilityTimeout: 12h1s}\n"),
		"retention below 1m":              fmt.Sprintf(base, "sqs", "    sqs: {messageRetentionPeriod: 59s}\n"),
		"negative drainTimeout":           fmt.Sprintf(base, "memory", "    drainTimeout: -1s\n"),
		"zero invisibleDuration":          "connections: {rocketmq: {endpoint: x}}\n" + fmt.Sprintf(base, "rocketmq", "    rocketmq: {consumerGroup: g, invisibleDuration: 0s}\n"),
		"rocketmq without endpoint":       fmt.Sprintf(base, "rocketmq", "    rocketmq: {consumerGroup: g}\n"),
		"gcp without project":             fmt.Sprintf(base, "gcp", ""),
		"duplicate names":                 fmt.Sprintf(base, "memory", "  - name: a\n    transport: memory\n    handler: {type: builtin, name: ack}\n"),
		"block of another transport":      fmt.Sprintf(base, "memory", "    sqs: {}\n"),
		"exec field on a builtin handler": strings.Replace(fmt.Sprintf(base, "memory", ""), "name: ack}", "name: ack, command: x}", 1),
		"bufferSize 11":                   fmt.Sprintf(base, "memory", "    bufferSize: 11\n"),
		"not a duration":                  fmt.Sprintf(base, "memory", "    requeueDelay: soon\n"),
		"unknown outcome in a script":     strings.Replace(fmt.Sprintf(base, "memory", ""), "name: ack}", "script: \"defer,nack\"}", 1),
	}
	for name, src := range cases {
		if _, err := config.Parse("t.yaml", []byte(src), func(string) (string, bool) { return "", false }); err == nil {
			t.Errorf("%s: the decoder accepts it", name)
		}
		if err := validate(sch, []byte(src)); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
	// A Pub/Sub id is 3 characters or more (the name is the channel here).
	ok := strings.Replace(fmt.Sprintf(base, "gcp", "    gcp: {projectId: p, ackDeadline: 0}\n    timeOut: ${T:-1s}\n"), "name: a\n", "name: abc\n", 1)
	if err := validate(sch, []byte(ok)); err != nil {
		t.Errorf("a valid file is refused by the schema: %v", err)
	}
	if _, err := config.Parse("t.yaml", []byte(ok), func(string) (string, bool) { return "", false }); err != nil {
		t.Errorf("a valid file is refused by the decoder: %v", err)
	}
}

type yamlFile struct {
	name string
	data []byte
}

// collectYAML returns every .yaml/.yml file under dirs, and every such file
// inside a .txtar archive there (named archive/file).
func collectYAML(t *testing.T, dirs ...string) []yamlFile {
	t.Helper()
	var out []yamlFile
	isYAML := func(p string) bool { return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") }
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == "hostile" && filepath.Base(filepath.Dir(filepath.Dir(p))) == "infra" {
				// The infrastructure readers' hostile files (alias bombs)
				// are their tests': converting them to JSON for the schema
				// would expand every alias.
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() {
				return err
			}
			switch {
			case isYAML(p):
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				out = append(out, yamlFile{name: p, data: data})
			case strings.HasSuffix(p, ".txtar"):
				a, err := txtar.ParseFile(p)
				if err != nil {
					return err
				}
				for _, f := range a.Files {
					if isYAML(f.Name) {
						out = append(out, yamlFile{name: p + "/" + f.Name, data: f.Data})
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", dir, err)
		}
	}
	return out
}

// validate checks a YAML document against the schema. A file that is not
// one YAML document cannot be described by a schema and is refused here, as
// the decoder refuses it.
func validate(sch *jsonschema.Schema, data []byte) error {
	if n := bytes.Count(append([]byte("\n"), data...), []byte("\n---")); n > 1 {
		return fmt.Errorf("more than one YAML document")
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(inst)
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(config.Schema()))
	if err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertVocabs()
	c.RegisterVocabulary(brighterVocab(t))
	if err := c.AddResource("brighter.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("brighter.schema.json")
	if err != nil {
		t.Fatalf("compile the schema: %v", err)
	}
	return sch
}

// brighterVocab implements the schema's x- keywords: x-durationRange
// (minimum, exclusiveMinimum, maximum: Go durations) and x-uniqueKey (the
// property whose values must differ between a list's items).
func brighterVocab(t *testing.T) *jsonschema.Vocabulary {
	t.Helper()
	meta, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"properties": {
		"x-durationRange": {"type": "object", "additionalProperties": false,
			"properties": {"minimum": {"type": "string"}, "exclusiveMinimum": {"type": "string"}, "maximum": {"type": "string"}}},
		"x-uniqueKey": {"type": "string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://github.com/brightergo/brighter/schema/vocab"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, meta); err != nil {
		t.Fatal(err)
	}
	msch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return &jsonschema.Vocabulary{URL: url, Schema: msch, Compile: compileVocab}
}

func compileVocab(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
	if k, ok := obj["x-uniqueKey"].(string); ok {
		return uniqueKey(k), nil
	}
	r, ok := obj["x-durationRange"].(map[string]any)
	if !ok {
		return nil, nil
	}
	dr := durationRange{}
	for k, v := range r {
		d, err := time.ParseDuration(v.(string))
		if err != nil {
			return nil, fmt.Errorf("x-durationRange.%s: %w", k, err)
		}
		switch k {
		case "minimum":
			dr.min = &d
		case "exclusiveMinimum":
			dr.exclusiveMin = &d
		case "maximum":
			dr.max = &d
		}
	}
	return dr, nil
}

type durationRange struct{ min, exclusiveMin, max *time.Duration }

func (r durationRange) Validate(ctx *jsonschema.ValidatorContext, v any) {
	var d time.Duration
	switch x := v.(type) {
	case string:
		if strings.Contains(x, "${") {
			return // taken from the environment at load time
		}
		var err error
		if d, err = time.ParseDuration(strings.TrimSpace(x)); err != nil {
			return // the duration pattern reports it
		}
	case json.Number, float64, *big.Rat, int:
		if fmt.Sprint(x) != "0" {
			return
		}
	default:
		return
	}
	switch {
	case r.min != nil && d < *r.min, r.exclusiveMin != nil && d <= *r.exclusiveMin, r.max != nil && d > *r.max:
		ctx.AddError(vocabError{keyword: "x-durationRange", msg: fmt.Sprintf("%s is out of range", d)})
	}
}

type uniqueKey string

func (k uniqueKey) Validate(ctx *jsonschema.ValidatorContext, v any) {
	items, ok := v.([]any)
	if !ok {
		return
	}
	seen := map[string]bool{}
	for _, it := range items {
		obj, ok := it.(map[string]any)
		if !ok {
			continue
		}
		if name, ok := obj[string(k)]; ok {
			s := fmt.Sprint(name)
			if seen[s] {
				ctx.AddError(vocabError{keyword: "x-uniqueKey", msg: fmt.Sprintf("duplicate %s %q", k, s)})
				return
			}
			seen[s] = true
		}
	}
}

type vocabError struct{ keyword, msg string }

func (e vocabError) KeywordPath() []string                     { return []string{e.keyword} }
func (e vocabError) LocalizedString(p *message.Printer) string { return e.msg }

// scriptEnv is the environment the files are decoded with: the variables
// the testscripts and the live lint corpus (testdata/lint/live) set (RUN,
// RMQ_ENDPOINT, BLACKHOLE, SQS_EXPIRED_PROXY, SQS_ENDPOINT, GCP_PROJECT,
// GCP_EMULATOR, PUBSUB_PROJECT, PUBSUB_ADDR, PREFIX), none other, so ${VAR:-default}
// takes its default as a user without those variables would.
func scriptEnv(name string) (string, bool) {
	switch name {
	case "RUN":
		return "r1", true
	case "RMQ_ENDPOINT":
		return "127.0.0.1:8081", true
	case "BLACKHOLE":
		return "127.0.0.1:9", true
	case "SQS_EXPIRED_PROXY", "SQS_ENDPOINT":
		return "http://127.0.0.1:9", true
	case "GCP_PROJECT", "PUBSUB_PROJECT":
		return "p1", true
	case "GCP_EMULATOR", "PUBSUB_ADDR":
		return "127.0.0.1:9", true
	case "PREFIX":
		return "x1", true
	}
	return "", false
}

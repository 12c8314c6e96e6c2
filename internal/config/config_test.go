package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/config"
)

func mustParse(t *testing.T, name, src string, env func(string) (string, bool)) *config.File {
	t.Helper()
	f, err := config.Parse(name, []byte(src), env)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

// TestParse_FillsBrighterDefaultsAndTransportBlocks checks Brighter's defaults
// (docs/configuration.md) and the per-transport timeOut and blocks filled for
// the chosen transport.
func TestParse_FillsBrighterDefaultsAndTransportBlocks(t *testing.T) {
	src := `connections:
  gcp: {projectId: proj}
  rocketmq: {endpoint: "127.0.0.1:8081"}
subscriptions:
  - name: q
    transport: sqs
    handler: {type: builtin, name: ack}
  - name: g
    transport: gcp
    channelName: g-sub
    handler: {type: exec, command: ./h.sh}
  - name: r
    transport: rocketmq
    handler: {type: http, url: "http://localhost:8080/h"}
    rocketmq: {consumerGroup: grp}
  - name: m
    transport: memory
    handler: {type: builtin, script: "defer, defer ,ack"}
`
	f := mustParse(t, "dir/brighter.yaml", src, noEnv())
	if len(f.Subscriptions) != 4 {
		t.Fatalf("got %d subscriptions, want 4", len(f.Subscriptions))
	}
	q := f.Subscriptions[0]
	want := config.Subscription{
		Name: "q", Transport: config.TransportSQS, ChannelName: "q", RoutingKey: "q",
		MessagePumpType: config.Proactor, BufferSize: 1, NoOfPerformers: 1, TimeOut: 20 * time.Second,
		RequeueCount: -1, EmptyChannelDelay: 500 * time.Millisecond, ChannelFailureDelay: time.Second,
		DrainTimeout: 10 * time.Second, MaxLeaseExtension: time.Hour, MakeChannels: config.MakeChannelsCreate,
		Handler: config.Handler{Type: config.HandlerBuiltin, Name: "ack", Timeout: 30 * time.Second},
		SQS: &config.SQS{
			ChannelType: config.ChannelPointToPoint, QueueType: config.QueueStandard, VisibilityTimeout: 30 * time.Second,
			RawMessageDelivery: true, ContentBasedDeduplication: true, MessageRetentionPeriod: 96 * time.Hour,
		},
	}
	if got := exported(q); !reflect.DeepEqual(got, want) {
		t.Errorf("sqs subscription:\n got %+v\nwant %+v", got, want)
	}
	if q.TimeOutSet || q.Set("requeueCount") {
		t.Errorf("TimeOutSet=%v Set(requeueCount)=%v, want both false for defaults", q.TimeOutSet, q.Set("requeueCount"))
	}

	g := f.Subscriptions[1]
	if g.ChannelName != "g-sub" || g.RoutingKey != "g-sub" || g.TimeOut != time.Second {
		t.Errorf("gcp: channel %q routing %q timeOut %v, want g-sub, g-sub, 1s", g.ChannelName, g.RoutingKey, g.TimeOut)
	}
	wantGCP := &config.GCP{ProjectID: "proj", Mode: config.GCPModeStream, AckDeadline: 30 * time.Second,
		MaxExtension: time.Hour, MaxRequeueDelay: 600 * time.Second}
	if !reflect.DeepEqual(g.GCP, wantGCP) || g.SQS != nil || g.RocketMQ != nil || g.Memory != nil {
		t.Errorf("gcp block = %+v (sqs %v rocketmq %v memory %v), want %+v and no other block", g.GCP, g.SQS, g.RocketMQ, g.Memory, wantGCP)
	}
	if g.Handler.Command != "dir/h.sh" || g.Handler.Timeout != 30*time.Second { // relative to the file
		t.Errorf("exec handler = %+v", g.Handler)
	}

	r := f.Subscriptions[2]
	wantR := &config.RocketMQ{ConsumerGroup: "grp", InvisibleDuration: 30 * time.Second, Tag: "*", MaxDeliveryAttempts: 16}
	if !reflect.DeepEqual(r.RocketMQ, wantR) || r.TimeOut != 20*time.Second {
		t.Errorf("rocketmq block = %+v timeOut %v, want %+v and 20s", r.RocketMQ, r.TimeOut, wantR)
	}

	m := f.Subscriptions[3]
	if m.TimeOut != 300*time.Millisecond {
		t.Errorf("memory timeOut = %v, want 300ms", m.TimeOut)
	}
	if !reflect.DeepEqual(m.Memory, &config.Memory{VisibilityTimeout: 30 * time.Second}) {
		t.Errorf("memory block = %+v, want defaults", m.Memory)
	}
	if want := []string{"defer", "defer", "ack"}; !reflect.DeepEqual(m.Handler.Script, want) {
		t.Errorf("script = %q, want %q", m.Handler.Script, want)
	}
	if f.Subscription("r") != r || f.Subscription("nope") != nil {
		t.Errorf("File.Subscription lookup wrong")
	}
	if f.Path != "dir/brighter.yaml" {
		t.Errorf("Path = %q", f.Path)
	}
}

// exported copies a subscription without its unexported position tables,
// for comparison.
func exported(s *config.Subscription) config.Subscription {
	return config.Subscription{
		Name: s.Name, Transport: s.Transport, ChannelName: s.ChannelName, RoutingKey: s.RoutingKey,
		MessagePumpType: s.MessagePumpType, BufferSize: s.BufferSize, NoOfPerformers: s.NoOfPerformers,
		TimeOut: s.TimeOut, TimeOutSet: s.TimeOutSet, RequeueCount: s.RequeueCount, RequeueDelay: s.RequeueDelay,
		UnacceptableMessageLimit: s.UnacceptableMessageLimit, UnacceptableMessageLimitWindow: s.UnacceptableMessageLimitWindow,
		EmptyChannelDelay: s.EmptyChannelDelay, ChannelFailureDelay: s.ChannelFailureDelay, DrainTimeout: s.DrainTimeout,
		MaxLeaseExtension: s.MaxLeaseExtension, MakeChannels: s.MakeChannels, DeadLetterRoutingKey: s.DeadLetterRoutingKey, InvalidMessageRoutingKey: s.InvalidMessageRoutingKey,
		Handler: s.Handler, SQS: s.SQS, GCP: s.GCP, RocketMQ: s.RocketMQ, Memory: s.Memory, Index: s.Index,
	}
}

// TestParse_ReadsEveryExplicitField checks that every field set in the file is
// read and that relative memory paths resolve against the file's directory.
// (Enum values are spelt as the schema spells them:
// TestSchemaAndLoaderAgreeOnWrongFiles.)
func TestParse_ReadsEveryExplicitField(t *testing.T) {
	src := `subscriptions:
  - name: all
    transport: memory
    channelName: ch
    routingKey: rk
    messagePumpType: reactor
    bufferSize: 10
    noOfPerformers: 4
    timeOut: 2s
    requeueCount: -3
    requeueDelay: 1m30s
    unacceptableMessageLimit: 5
    unacceptableMessageLimitWindow: 1m
    emptyChannelDelay: 0
    channelFailureDelay: 2s
    drainTimeout: 1m
    maxLeaseExtension: 10m
    makeChannels: validate
    deadLetterRoutingKey: dlq
    invalidMessageRoutingKey: bad
    handler:
      type: http
      timeout: 5s
      url: https://example.com/h
      headers: {X-Team: payments, X-N: 3}
      tls: {caFile: ca.pem, certFile: c.pem, keyFile: k.pem, insecureSkipVerify: true}
    memory:
      seed: seed.jsonl
      output: /tmp/out.jsonl
      stopWhenEmpty: true
      visibilityTimeout: 5s
`
	f := mustParse(t, filepath.Join("conf", "b.yaml"), src, noEnv())
	s := f.Subscriptions[0]
	if s.ChannelName != "ch" || s.RoutingKey != "rk" || s.MessagePumpType != config.Reactor || s.BufferSize != 10 ||
		s.NoOfPerformers != 4 || s.TimeOut != 2*time.Second || !s.TimeOutSet || s.RequeueCount != -3 ||
		s.RequeueDelay != 90*time.Second || s.UnacceptableMessageLimit != 5 || s.UnacceptableMessageLimitWindow != time.Minute ||
		s.EmptyChannelDelay != 0 || s.ChannelFailureDelay != 2*time.Second || s.DrainTimeout != time.Minute ||
		s.MaxLeaseExtension != 10*time.Minute || s.MakeChannels != config.MakeChannelsValidate || s.DeadLetterRoutingKey != "dlq" || s.InvalidMessageRoutingKey != "bad" {
		t.Errorf("subscription fields not read: %+v", exported(s))
	}
	h := s.Handler
	wantH := config.Handler{Type: config.HandlerHTTP, Timeout: 5 * time.Second, URL: "https://example.com/h",
		Headers: map[string]string{"X-Team": "payments", "X-N": "3"},
		TLS: &config.TLS{CAFile: filepath.Join("conf", "ca.pem"), CertFile: filepath.Join("conf", "c.pem"), KeyFile: filepath.Join("conf", "k.pem"),
			InsecureSkipVerify: true}}
	if !reflect.DeepEqual(h, wantH) {
		t.Errorf("handler = %+v, want %+v", h, wantH)
	}
	wantM := &config.Memory{Seed: filepath.Join("conf", "seed.jsonl"), Output: "/tmp/out.jsonl", StopWhenEmpty: true, VisibilityTimeout: 5 * time.Second}
	if !reflect.DeepEqual(s.Memory, wantM) {
		t.Errorf("memory = %+v, want %+v", s.Memory, wantM)
	}
}

// TestParse_ExecCommandRelativeToTheFile: an exec command given as a
// relative path resolves against the file's directory, as memory paths do
// (else ./handler.sh passes lint and fails consume when run from another
// directory); a bare name is left for the PATH lookup.
func TestParse_ExecCommandRelativeToTheFile(t *testing.T) {
	for _, tc := range []struct{ file, command, want string }{
		{filepath.Join("conf", "b.yaml"), "./handler.sh", "conf/handler.sh"},
		{filepath.Join("conf", "b.yaml"), "bin/h", "conf/bin/h"},
		{"b.yaml", "./handler.sh", "./handler.sh"},
		{filepath.Join("conf", "b.yaml"), "python3", "python3"},
		{filepath.Join("conf", "b.yaml"), "/usr/bin/env", "/usr/bin/env"},
	} {
		src := "subscriptions:\n  - name: s\n    transport: memory\n    handler: {type: exec, command: " + tc.command + "}\n"
		f := mustParse(t, tc.file, src, noEnv())
		if got := f.Subscriptions[0].Handler.Command; got != tc.want {
			t.Errorf("%s in %s: command %q, want %q", tc.command, tc.file, got, tc.want)
		}
	}
}

// TestParse_EnvExpansion checks ${VAR} and ${VAR:-default} in scalar values,
// typed after expansion, and that keys and comments are not expanded.
func TestParse_EnvExpansion(t *testing.T) {
	src := `connections:
  aws:
    region: ${REGION}
    endpoint: ${ENDPOINT:-http://localhost:4566}   # ${NOT_EXPANDED}
subscriptions:
  - name: ${NAME:-orders}
    transport: sqs
    bufferSize: ${BUF}
    requeueCount: "${COUNT}"
    timeOut: ${WAIT:-5s}
    handler:
      type: exec
      command: ${CMD}
      args: ["--token=${TOKEN}"]
      env: {MODE: "${MODE:-}", LIT: "literal-$${NOT_A_VAR}-$HOME"}
    sqs:
      rawMessageDelivery: ${RAW}
`
	env := noEnv("REGION", "eu-west-1", "BUF", "7", "COUNT", "3", "CMD", "/bin/handler", "TOKEN", "s3cret", "RAW", "false", "MODE", "")
	f := mustParse(t, "e.yaml", src, env)
	s := f.Subscriptions[0]
	if f.Connections.AWS.Region != "eu-west-1" || f.Connections.AWS.Endpoint != "http://localhost:4566" {
		t.Errorf("connections.aws = %+v", f.Connections.AWS)
	}
	if s.Name != "orders" || s.BufferSize != 7 || s.RequeueCount != 3 || s.TimeOut != 5*time.Second {
		t.Errorf("name %q bufferSize %d requeueCount %d timeOut %v, want orders 7 3 5s", s.Name, s.BufferSize, s.RequeueCount, s.TimeOut)
	}
	if s.Handler.Env["LIT"] != "literal-${NOT_A_VAR}-$HOME" {
		t.Errorf("handler.env.LIT = %q, want the escape and the bare $ kept", s.Handler.Env["LIT"])
	}
	if s.Handler.Command != "/bin/handler" || !reflect.DeepEqual(s.Handler.Args, []string{"--token=s3cret"}) ||
		!reflect.DeepEqual(s.Handler.Env, map[string]string{"MODE": "", "LIT": "literal-${NOT_A_VAR}-$HOME"}) {
		t.Errorf("handler = %+v", s.Handler)
	}
	if s.SQS.RawMessageDelivery {
		t.Errorf("rawMessageDelivery = true, want false from ${RAW}")
	}

	// A value that expands to the wrong type names the variable's value.
	// The value is quoted as written, never expanded: an environment
	// value may be a secret (docs/security.md).
	errs := errorTexts(t, "subscriptions:\n  - name: a\n    transport: memory\n    bufferSize: ${BUF:-ten}\n    handler: {type: builtin, name: ack}\n")
	if want := `test.yaml:4:17: subscriptions[0].bufferSize: must be an integer, got the value of "${BUF:-ten}" (not shown: environment values may be secrets)`; len(errs) != 1 || errs[0] != want {
		t.Errorf("errors = %q, want %q", errs, want)
	}
	errs = errorTexts(t, "subscriptions:\n  - name: ${A\n    transport: memory\n    handler:\n      type: builtin\n      name: ${1X}\n")
	want := []string{
		`test.yaml:2:11: subscriptions[0].name: unterminated ${ in "${A"`,
		`test.yaml:6:13: subscriptions[0].handler.name: invalid variable name "1X" in ${1X}; use letters, digits and _`,
	}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("errors = %q, want %q", errs, want)
	}
}

// TestParse_NilEnvUsesProcessEnvironment checks that a nil env func falls
// back to os.LookupEnv.
func TestParse_NilEnvUsesProcessEnvironment(t *testing.T) {
	t.Setenv("BRIGHTER_CONFIG_TEST_QUEUE", "from-env")
	f := mustParse(t, "n.yaml", "subscriptions:\n  - name: ${BRIGHTER_CONFIG_TEST_QUEUE}\n    transport: memory\n    handler: {type: builtin, name: ack}\n", nil)
	if f.Subscriptions[0].Name != "from-env" {
		t.Errorf("name = %q, want from-env", f.Subscriptions[0].Name)
	}
}

// TestSubscriptionPos_KeepsKeyPositionsWithFallbacks checks the positions kept
// for lint: keys that were present, nested keys, and the fall-backs for absent
// ones.
func TestSubscriptionPos_KeepsKeyPositionsWithFallbacks(t *testing.T) {
	src := `connections:
  gcp:
    projectId: p
subscriptions:
  - name: a
    transport: memory
    handler: {type: builtin, name: ack}
  - name: b
    transport: sqs
    requeueCount: 3
    handler:
      type: builtin
      name: defer
    sqs:
      redrivePolicy:
        deadLetterQueue: dlq
        maxReceiveCount: 5
`
	f := mustParse(t, "p.yaml", src, noEnv())
	b := f.Subscriptions[1]
	pos := func(line, col int) config.Position { return config.Position{File: "p.yaml", Line: line, Column: col} }
	cases := []struct {
		field string
		want  config.Position
	}{
		{"", pos(8, 5)},
		{"name", pos(8, 5)},
		{"requeueCount", pos(10, 5)},
		{"handler", pos(11, 5)},
		{"handler.name", pos(13, 7)},
		{"sqs.redrivePolicy.maxReceiveCount", pos(17, 9)},
		{"sqs.redrivePolicy.tags", pos(15, 7)}, // absent: nearest present ancestor
		{"bufferSize", pos(8, 5)},              // absent: the subscription
	}
	for _, c := range cases {
		if got := b.Pos(c.field); got != c.want {
			t.Errorf("Pos(%q) = %v, want %v", c.field, got, c.want)
		}
	}
	if !b.Set("sqs.redrivePolicy.maxReceiveCount") || b.Set("bufferSize") {
		t.Errorf("Set: maxReceiveCount %v (want true), bufferSize %v (want false)", b.Set("sqs.redrivePolicy.maxReceiveCount"), b.Set("bufferSize"))
	}
	if got := f.Subscriptions[0].Pos("handler.name"); got != pos(7, 30) {
		t.Errorf("flow-style handler.name at %v, want 7:30", got)
	}
	if got, want := f.Pos("connections.gcp.projectId"), pos(3, 5); got != want {
		t.Errorf("File.Pos(projectId) = %v, want %v", got, want)
	}
	if got, want := f.Pos("subscriptions[1].requeueCount"), pos(10, 5); got != want {
		t.Errorf("File.Pos(subscriptions[1].requeueCount) = %v, want %v", got, want)
	}
	if got, want := f.Pos("connections.aws.region"), pos(1, 1); got != want {
		t.Errorf("File.Pos(absent) = %v, want %v", got, want)
	}
	// File.Pos of a path under a subscription answers as that
	// subscription's Pos does, fall-backs included; a path naming no
	// subscription falls back to the subscriptions key.
	for _, c := range []struct {
		path string
		want config.Position
	}{
		{"subscriptions", pos(4, 1)},
		{"subscriptions[1]", pos(8, 5)},
		{"subscriptions[1].handler.name", pos(13, 7)},
		{"subscriptions[1].sqs.redrivePolicy.tags", pos(15, 7)},
		{"subscriptions[1].bufferSize", pos(8, 5)},
		{"subscriptions[1][0]", pos(8, 5)},
		{"subscriptions[0].handler.name", pos(7, 30)},
		{"subscriptions[2].name", pos(4, 1)},
		{"subscriptions[01].name", pos(4, 1)},
		{"subscriptions[-1]", pos(4, 1)},
		{"subscriptions[1", pos(4, 1)},
	} {
		if got := f.Pos(c.path); got != c.want {
			t.Errorf("File.Pos(%q) = %v, want %v", c.path, got, c.want)
		}
	}
	if b.Path() != "subscriptions[1]" || b.Pos("").String() != "p.yaml:8:5" {
		t.Errorf("Path %q, Pos string %q", b.Path(), b.Pos("").String())
	}
}

// TestParse_AnchorsAndMergeKeys checks that shared settings can be written
// once with an anchor and merged into several subscriptions.
func TestParse_AnchorsAndMergeKeys(t *testing.T) {
	src := `subscriptions:
  - &base
    name: a
    transport: memory
    requeueCount: 3
    handler: &h {type: builtin, name: defer}
  - <<: *base
    name: b
    requeueCount: 5
  - name: c
    transport: memory
    handler: *h
`
	f := mustParse(t, "m.yaml", src, noEnv())
	b := f.Subscriptions[1]
	if b.Name != "b" || b.RequeueCount != 5 || b.Transport != config.TransportMemory || b.Handler.Name != "defer" {
		t.Errorf("merged subscription = %+v", exported(b))
	}
	if c := f.Subscriptions[2]; c.Handler.Name != "defer" {
		t.Errorf("aliased handler = %+v", c.Handler)
	}
	// A self-referencing merge terminates with an error.
	errs := errorTexts(t, "subscriptions:\n  - &x\n    <<: *x\n")
	if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), "referring to itself") {
		t.Errorf("self-merge errors = %q", errs)
	}
}

// TestLoad_ReadsFileAndWrapsAMissingOneAsReadError reads a file from disk, and
// reports a missing file as a wrapped read error rather than config.Errors.
func TestLoad_ReadsFileAndWrapsAMissingOneAsReadError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(p, []byte("subscriptions:\n  - name: a\n    transport: memory\n    handler: {type: builtin, name: ack}\n    memory: {seed: s.jsonl}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := config.Load(p, noEnv())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if f.Path != p || f.Subscriptions[0].Memory.Seed != filepath.Join(dir, "s.jsonl") {
		t.Errorf("Path %q seed %q", f.Path, f.Subscriptions[0].Memory.Seed)
	}
	_, err = config.Load(filepath.Join(dir, "missing.yaml"), noEnv())
	var es config.Errors
	if err == nil || errors.As(err, &es) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want a wrapped os.ErrNotExist", err)
	}
}

// TestExamples_AreValidAndEachShowsThePoisonDrill loads every examples/*.yaml:
// each must be valid, and each shows the poison-message drill (requeueCount 3,
// a deferring handler, a deadLetterRoutingKey) on its own transport.
func TestExamples_AreValidAndEachShowsThePoisonDrill(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d examples, want at least 5 (sqs, sns, gcp, rocketmq, memory)", len(files))
	}
	transports := map[config.Transport]bool{}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := config.Load(p, noEnv())
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			for _, s := range f.Subscriptions {
				transports[s.Transport] = true
				defers := s.Handler.Name == config.BuiltinDefer ||
					(len(s.Handler.Script) > 0 && s.Handler.Script[0] == config.BuiltinDefer)
				if s.RequeueCount != 3 || !defers || s.DeadLetterRoutingKey == "" {
					t.Errorf("%s: requeueCount %d, handler %+v, deadLetterRoutingKey %q: not a poison-message drill",
						s.Name, s.RequeueCount, s.Handler, s.DeadLetterRoutingKey)
				}
				if s.Memory != nil && s.Memory.Seed != "" {
					if _, err := os.Stat(s.Memory.Seed); err != nil {
						t.Errorf("%s: seed file: %v", s.Name, err)
					}
				}
			}
		})
	}
	for _, tr := range []config.Transport{config.TransportSQS, config.TransportGCP, config.TransportRocketMQ, config.TransportMemory} {
		if !transports[tr] {
			t.Errorf("no example uses transport %s", tr)
		}
	}
	sns, err := config.Load(filepath.Join("..", "..", "examples", "sns.yaml"), noEnv())
	if err != nil {
		t.Fatal(err)
	}
	if s := sns.Subscriptions[0]; s.SQS.ChannelType != config.ChannelPubSub || s.RoutingKey == s.ChannelName {
		t.Errorf("sns.yaml: channelType %q routingKey %q channelName %q, want pubSub with a topic distinct from the queue",
			s.SQS.ChannelType, s.RoutingKey, s.ChannelName)
	}
}

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, and it must
// return exactly one of a file and an error; every error has a position.
// The seed corpus (the examples and broken files) runs in every `go test`.
func FuzzParse(f *testing.F) {
	examples, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	for _, p := range examples {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "-", "subscriptions:", "subscriptions: [1, 2]", "subscriptions:\n  - {}\n",
		"subscriptions:\n  - name: a\n    transport: memory\n    handler: {type: builtin, name: ack}\n",
		"subscriptions:\n  - &x\n    <<: *x\n", "a: &a [*a]\n", "subscriptions:\n  - <<: [*u]\n",
		"subscriptions:\n  - name: ${\n", "subscriptions:\n  - name: !!binary aGk=\n    bufferSize: 0x7fffffffffffffffff\n",
		"subscriptions:\n  - name: a\n    transport: memory\n    requeueCount: 99999999999999999999999\n    timeOut: 9999999999h\n",
		"subscriptions:\n  - ? [a]\n    : b\n", "%YAML 1.2\n---\n[", "\t- a", "{\"subscriptions\": [{\"name\": \"x\"}]}",
		"subscriptions:\n  - name: a\n    handler: |\n      type: exec\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := config.Parse("fuzz.yaml", data, noEnv("A", "1"))
		if (file == nil) == (err == nil) {
			t.Fatalf("Parse returned file %v and error %v; want exactly one", file != nil, err)
		}
		if err != nil {
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T is not a non-empty config.Errors", err)
			}
			for _, e := range es {
				if e.Line < 1 || e.Column < 0 || e.File != "fuzz.yaml" {
					t.Fatalf("error without a position: %#v", e)
				}
			}
			return
		}
		for _, s := range file.Subscriptions {
			if s.Name == "" || s.Handler.Type == "" || s.BufferSize < 1 || s.BufferSize > 10 {
				t.Fatalf("valid file with an invalid subscription: %+v", s)
			}
		}
	})
}

// TestGCPRoutingKeysReadBack_AC14 reads a gcp subscription's
// deadLetterRoutingKey and invalidMessageRoutingKey back in every mode
// (AC-14, R-15). It was a conformance row; it touches no emulator, so it is
// a config test, where it runs in milliseconds.
func TestGCPRoutingKeysReadBack_AC14(t *testing.T) {
	for _, mode := range []string{config.GCPModePull, config.GCPModeStream} {
		for _, ordering := range []bool{false, true} {
			src := `connections: {gcp: {projectId: p}}
subscriptions:
  - name: orders
    transport: gcp
    deadLetterRoutingKey: orders.DLQ
    invalidMessageRoutingKey: orders.Invalid
    handler: {type: builtin, name: ack}
    gcp: {mode: ` + mode + `, enableMessageOrdering: ` + map[bool]string{false: "false", true: "true"}[ordering] + `}
`
			f := mustParse(t, "ac14.yaml", src, func(string) (string, bool) { return "", false })
			s := f.Subscription("orders")
			if s.DeadLetterRoutingKey != "orders.DLQ" || s.InvalidMessageRoutingKey != "orders.Invalid" {
				t.Errorf("%s ordering=%t: routing keys read back %q, %q", mode, ordering, s.DeadLetterRoutingKey, s.InvalidMessageRoutingKey)
			}
		}
	}
}

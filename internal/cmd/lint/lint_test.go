package lint_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/lint"
)

// TestLintBrokenFiles lints each deliberately broken file under
// testdata/lint: <rule-id>.yaml must trip that rule, and the exit code must
// follow its severity under the default --fail-on error.
func TestLintBrokenFiles(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/lint/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, path := range files {
		id := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(id, func(t *testing.T) {
			rule, ok := lint.Lookup(id)
			if !ok {
				t.Fatalf("%s is named after no rule", path)
			}
			io, out, errOut := cmdtest.FakeIO("", false)
			code := run(context.Background(), io, []string{"lint", "--format", "json", path})
			var rep struct {
				Findings []struct {
					Rule     string `json:"rule"`
					Severity string `json:"severity"`
					Line     int    `json:"line"`
				} `json:"findings"`
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("output is not JSON: %v\n%s\n%s", err, out, errOut)
			}
			tripped, worst := false, lint.SeverityNote
			for _, f := range rep.Findings {
				if f.Rule == id {
					tripped = true
					if f.Line < 1 {
						t.Errorf("finding without a line: %+v", f)
					}
				}
				s, _ := lint.ParseSeverity(f.Severity)
				worst = max(worst, s)
			}
			if !tripped {
				t.Fatalf("%s does not trip %s: %s", path, id, out)
			}
			want := cmdutil.ExitOK
			if worst >= lint.SeverityError {
				want = cmdutil.ExitFailure
			}
			if code != want {
				t.Errorf("exit code %d, want %d (worst finding %s); stderr %s", code, want, worst, errOut)
			}
			covered[rule.ID] = true
		})
	}
	// The --live rules need a broker, not a file: TestLintLive_GCPDrift and
	// internal/lint/live cover them.
	covered[lint.RuleNativeLimitDrift], covered[lint.RuleLiveCheckFailed] = true, true
	// missing-destination has one broken file per kind of destination under
	// testdata/lint/live (TestLintLiveMissingDestinations).
	covered[lint.RuleMissingDestination] = true
	covered[lint.RuleDestinationMessageSize] = true // TestSQSDestinationSmallerThanSource
	// The --infra rules need an infrastructure file beside the
	// subscriptions file: TestLintInfraCorpus lints each with a file of
	// testdata/infra/terraform/<rule-id> that trips it and one that does not.
	// dead-letter-topic-unsubscribed runs against both: the corpus, and
	// TestLintInfraMatchesLive on Google's emulator.
	for _, id := range []string{lint.RuleDeadLetterTargetMismatch, lint.RuleRedriveAllowForbidsSource,
		lint.RuleRetentionShorterThanBudget, lint.RuleDeliveryOrderDrift, lint.RuleInfraUndeclared, lint.RuleRawDeliveryDrift,
		lint.RuleDeadLetterTopicUnsubscribed} {
		covered[id] = true
	}
	for _, r := range lint.Rules() {
		if !covered[r.ID] {
			t.Errorf("no broken file testdata/lint/%s.yaml", r.ID)
		}
	}
}

// TestLintExamplesAreClean: the shipped examples carry no finding at all.
func TestLintExamplesAreClean(t *testing.T) {
	files, err := filepath.Glob("../../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	io, out, errOut := cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, append([]string{"lint", "--fail-on", "note"}, files...)); code != cmdutil.ExitOK {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(out.String(), "no findings in ") {
		t.Errorf("output %q", out)
	}
}

// TestLintColourOnTerminal: the text format is coloured only when the
// streams say so (a terminal without NO_COLOR).
func TestLintColourOnTerminal(t *testing.T) {
	in := "subscriptions:\n  - name: o\n    transport: memory\n    requeueCount: 0\n    deadLetterRoutingKey: d\n    handler: {type: builtin, name: ack}\n"
	for _, color := range []bool{true, false} {
		io, out, _ := cmdtest.FakeIO(in, color)
		if code := run(context.Background(), io, []string{"lint", "-"}); code != cmdutil.ExitOK {
			t.Fatalf("exit %d: %s", code, out)
		}
		if got := strings.Contains(out.String(), "\x1b["); got != color {
			t.Errorf("color=%v: escapes present = %v:\n%q", color, got, out)
		}
		if !strings.Contains(out.String(), "<stdin>:4:5") {
			t.Errorf("stdin finding not at <stdin>:4:5\n%s", out)
		}
	}
}

// TestLintLive_GCPDrift runs `brighter lint --live` against the Pub/Sub
// emulator (Google's, reached through connections.gcp.emulatorHost) with a
// drift seeded there: the file says maxDeliveryAttempts 13, the subscription
// has 5, and requeueCount 6 is outranked on the broker only.
func TestLintLive_GCPDrift(t *testing.T) {
	ctx := context.Background()
	client, srv := gcptest.Start(t, "demo", nil, gcp.Connect)
	pj := srv.Project
	for _, topic := range []string{"payments", "payments-native"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + pj + "/topics/" + topic}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/" + pj + "/subscriptions/payments-sub", Topic: "projects/" + pj + "/topics/payments",
		DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: "projects/" + pj + "/topics/payments-native", MaxDeliveryAttempts: 5},
	}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := `connections:
  gcp:
    projectId: ` + pj + `
    emulatorHost: ` + srv.Addr + `
subscriptions:
  - name: payments
    transport: gcp
    channelName: payments-sub
    requeueCount: 6
    deadLetterRoutingKey: payments-dlq
    handler: {type: builtin, name: defer}
    gcp:
      deadLetterPolicy:
        topic: payments-native
        maxDeliveryAttempts: 13
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without --live the file alone looks fine.
	io, out, errOut := cmdtest.FakeIO("", false)
	if code := run(ctx, io, []string{"lint", "--fail-on", "warning", file}); code != cmdutil.ExitOK {
		t.Fatalf("lint without --live: exit %d\n%s%s", code, out, errOut)
	}
	io, out, errOut = cmdtest.FakeIO("", false)
	code := run(ctx, io, []string{"lint", "--live", file})
	if code != cmdutil.ExitOK {
		t.Fatalf("lint --live: exit %d, want 0 (warnings only)\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"warning native-limit-drift: subscription \"payments\": the file sets gcp.deadLetterPolicy.maxDeliveryAttempts 13 but the broker has 5",
		"warning budget-outranked: subscription \"payments\": requeueCount 6 >= gcp.deadLetterPolicy.maxDeliveryAttempts 5 on the broker",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lint --live output lacks %q:\n%s", want, out)
		}
	}
}

// TestLint_RefusesWhatConsumeCannotStart: a file whose exec handler's
// command or memory seed file consume would refuse (exit 2) is an error of
// lint at the field's key, a relative path taken from the subscriptions
// file's directory (not lint's working directory), as consume takes it.
func TestLint_RefusesWhatConsumeCannotStart(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "deploy")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(sub, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("handle.sh", "#!/bin/sh\n", 0o755)
	write("bad.jsonl", "{not json\n", 0o644)
	good := write("good.yaml", "subscriptions:\n  - name: orders\n    transport: memory\n    handler: {type: exec, command: ./handle.sh}\n", 0o644)
	bad := write("bad.yaml", "subscriptions:\n  - name: orders\n    transport: memory\n    handler: {type: exec, command: ./nosuch.sh}\n"+
		"  - name: seeded\n    transport: memory\n    handler: {type: builtin, name: ack}\n    memory:\n      seed: nosuch.jsonl\n"+
		"  - name: garbled\n    transport: memory\n    handler: {type: builtin, name: ack}\n    memory: {seed: bad.jsonl}\n", 0o644)

	io, out, errOut := cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, []string{"lint", "--fail-on", "warning", good}); code != cmdutil.ExitOK {
		t.Fatalf("a command beside the file: exit %d\n%s%s", code, out, errOut)
	}
	io, out, errOut = cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, []string{"lint", bad}); code != cmdutil.ExitFailure {
		t.Fatalf("exit %d, want %d\n%s%s", code, cmdutil.ExitFailure, out, errOut)
	}
	for _, want := range []string{
		bad + `:4:27: error handler-command-not-found: subscription "orders": handler.command "` + filepath.Join(sub, "nosuch.sh") + `" cannot be run: no such file or directory`,
		bad + `:9:7: error memory-seed-invalid: subscription "seeded": memory.seed "` + filepath.Join(sub, "nosuch.jsonl") + `": no such file or directory`,
		bad + `:13:14: error memory-seed-invalid: subscription "garbled": memory.seed "` + filepath.Join(sub, "bad.jsonl") + `": line 1: `,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestLint_CosmeticsOfTheReport: a directory given as a file is named once
// in its error; --list-rules keeps its severity and requirement columns
// aligned whatever the length of a rule's id; and a clean file says the
// same "no findings" line whether it was named or read from stdin.
func TestLint_CosmeticsOfTheReport(t *testing.T) {
	dir := t.TempDir()
	io, out, errOut := cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, []string{"lint", dir}); code != cmdutil.ExitUsage {
		t.Fatalf("a directory: exit %d, want %d\n%s", code, cmdutil.ExitUsage, out)
	}
	if got := strings.Count(errOut.String(), dir); got != 1 {
		t.Errorf("a directory is named %d times in %q, want once", got, errOut)
	}
	if !strings.Contains(errOut.String(), "read "+dir+": is a directory") {
		t.Errorf("stderr %q does not say read %s: is a directory", errOut, dir)
	}

	io, out, _ = cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, []string{"lint", "--list-rules"}); code != cmdutil.ExitOK {
		t.Fatalf("--list-rules: exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(lint.Rules()) {
		t.Fatalf("--list-rules wrote %d lines for %d rules", len(lines), len(lint.Rules()))
	}
	sevCol, reqCol := -1, -1
	for i, r := range lint.Rules() {
		l := lines[i]
		rest, ok := strings.CutPrefix(l, r.ID)
		if !ok {
			t.Fatalf("line %q does not start with %s", l, r.ID)
		}
		sev := len(r.ID) + len(rest) - len(strings.TrimLeft(rest, " "))
		if !strings.HasPrefix(l[sev:], r.Severity.String()+" ") || sev == len(r.ID) {
			t.Fatalf("line %q: no severity %s after the id and a blank", l, r.Severity)
		}
		after := l[sev+len(r.Severity.String()):]
		req := sev + len(r.Severity.String()) + len(after) - len(strings.TrimLeft(after, " "))
		if sevCol < 0 {
			sevCol, reqCol = sev, req
		}
		if sev != sevCol || req != reqCol {
			t.Errorf("line %q: severity at column %d and requirement at %d, want %d and %d", l, sev, req, sevCol, reqCol)
		}
	}

	file := filepath.Join(dir, "clean.yaml")
	clean := "subscriptions:\n  - name: orders\n    transport: memory\n    handler: {type: builtin, name: ack}\n"
	if err := os.WriteFile(file, []byte(clean), 0o644); err != nil {
		t.Fatal(err)
	}
	io, out, _ = cmdtest.FakeIO("", false)
	run(context.Background(), io, []string{"lint", file})
	named := out.String()
	io, out, _ = cmdtest.FakeIO(clean, false)
	run(context.Background(), io, []string{"lint", "-"})
	if named != "no findings in 1 file\n" || out.String() != named {
		t.Errorf("a named file says %q, stdin %q; want both %q", named, out, "no findings in 1 file\n")
	}
}

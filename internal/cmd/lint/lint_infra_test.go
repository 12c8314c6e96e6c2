package lint_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/lint"
)

// infraFinding is one finding of `lint -o json` with its related position.
type infraFinding struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Related  *struct {
		File string `json:"file"`
		Line int    `json:"line"`
	} `json:"related"`
}

// lintInfra runs `brighter lint -o json ARGS...` and returns its exit
// code and findings.
func lintInfra(t *testing.T, args ...string) (int, []infraFinding) {
	t.Helper()
	io, out, errOut := cmdtest.FakeIO("", false)
	code := run(context.Background(), io, append([]string{"lint", "-o", "json", "--fail-on", "error"}, args...))
	var rep struct {
		Findings []infraFinding `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("lint %v: output is not JSON: %v\n%s\n%s", args, err, out, errOut)
	}
	return code, rep.Findings
}

// TestLintInfraCorpus lints the subscriptions file of each rule's directory
// under testdata/infra/terraform, testdata/infra/cloudformation/rules and
// testdata/infra/krm/rules against its trigger file (a plan JSON, a .tf
// file, a CloudFormation template or a Kubernetes manifest), which must trip the rule the directory is named after, at a
// line and column of the infrastructure file with the subscription as the
// related position, and against its ok file, which must not trip it. The
// clean directory's files, read one by one and walked as a directory,
// give no finding at all.
func TestLintInfraCorpus(t *testing.T) {
	var dirs []string
	for _, pattern := range []string{"../../../testdata/infra/terraform/*", "../../../testdata/infra/cloudformation/rules/*", "../../../testdata/infra/krm/rules/*"} {
		got, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, got...)
	}
	if len(dirs) < 16 {
		t.Fatalf("no corpus: %v", dirs)
	}
	covered := map[string]bool{}
	for _, dir := range dirs {
		rule := filepath.Base(dir)
		yaml := filepath.Join(dir, "brighter.yaml")
		if rule == "clean" {
			continue
		}
		if _, ok := lint.Lookup(rule); !ok {
			t.Fatalf("%s is named after no rule", dir)
		}
		t.Run(filepath.Base(filepath.Dir(dir))+"/"+rule, func(t *testing.T) {
			triggers, _ := filepath.Glob(filepath.Join(dir, "trigger.*"))
			oks, _ := filepath.Glob(filepath.Join(dir, "ok.*"))
			if len(triggers) != 1 || len(oks) != 1 {
				t.Fatalf("want one trigger and one ok file, got %v %v", triggers, oks)
			}
			_, fs := lintInfra(t, "--infra", triggers[0], yaml)
			tripped := false
			for _, f := range fs {
				if f.Rule == lint.RuleLiveCheckFailed {
					t.Errorf("live-check-failed from infrastructure files: %s", f.Message)
				}
				if f.Rule != rule {
					continue
				}
				tripped = true
				want := triggers[0]
				if rule == lint.RuleInfraUndeclared {
					want = yaml // nothing declares it: the finding is the subscription's
				} else if f.Related == nil || f.Related.File != yaml || f.Related.Line < 1 {
					t.Errorf("finding %+v: want the subscription in %s as related position", f, yaml)
				}
				if f.File != want || f.Line < 1 || f.Column < 1 {
					t.Errorf("finding at %s:%d:%d, want a line and column of %s", f.File, f.Line, f.Column, want)
				}
			}
			if !tripped {
				t.Errorf("%s does not trip %s: %+v", triggers[0], rule, fs)
			}
			covered[rule] = true
			_, fs = lintInfra(t, "--infra", oks[0], yaml)
			for _, f := range fs {
				if f.Rule == rule || f.Rule == lint.RuleLiveCheckFailed {
					t.Errorf("%s trips %s: %s", oks[0], f.Rule, f.Message)
				}
			}
		})
	}
	for _, r := range []string{lint.RuleNativeLimitDrift, lint.RuleBudgetOutranked, lint.RuleBudgetCannotRunDown, lint.RuleDestinationMessageSize,
		lint.RuleDeadLetterTargetMismatch, lint.RuleRedriveAllowForbidsSource, lint.RuleRetentionShorterThanBudget, lint.RuleDeliveryOrderDrift,
		lint.RuleInfraUndeclared, lint.RuleHandlerTimeoutExceedsLease, lint.RuleRawDeliveryDrift, lint.RuleDeadLetterTopicUnsubscribed} {
		if !covered[r] {
			t.Errorf("no directory testdata/infra/terraform/%s", r)
		}
	}
	clean := "../../../testdata/infra/terraform/clean"
	for _, paths := range [][]string{{clean + "/plan.json"}, {clean + "/orders.tf", clean + "/payments.tf"}, {clean}} {
		var args []string
		for _, p := range paths {
			args = append(args, "--infra", p)
		}
		code, fs := lintInfra(t, append(args, "--fail-on", "note", clean+"/brighter.yaml")...)
		if code != cmdutil.ExitOK || len(fs) != 0 {
			t.Errorf("--infra %v: exit %d, findings %+v; want none", paths, code, fs)
		}
	}
}

// TestLintInfraRequireAll: a channel no infrastructure file declares is a
// warning, and an error (exit 1) with --infra-require-all.
func TestLintInfraRequireAll(t *testing.T) {
	dir := "../../../testdata/infra/terraform/infra-undeclared"
	for _, c := range []struct {
		flag     []string
		severity string
		code     int
	}{{nil, "warning", cmdutil.ExitOK}, {[]string{"--infra-require-all"}, "error", cmdutil.ExitFailure}} {
		code, fs := lintInfra(t, append(c.flag, "--infra", dir+"/trigger.tf", dir+"/brighter.yaml")...)
		if code != c.code || len(fs) != 1 || fs[0].Rule != lint.RuleInfraUndeclared || fs[0].Severity != c.severity {
			t.Errorf("%v: exit %d, findings %+v; want exit %d and one %s infra-undeclared", c.flag, code, fs, c.code, c.severity)
		}
	}
}

// TestLintInfraUnreadable: an infrastructure file that does not parse, or
// that is of no format --infra reads, is a usage error (exit 2) naming the
// file, line and column; the subscriptions file is still linted.
func TestLintInfraUnreadable(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "main.tf")
	if err := os.WriteFile(bad, []byte("resource \"aws_sqs_queue\" \"q\" {\n  name = \n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "notes.txt")
	if err := os.WriteFile(other, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := "../../../testdata/infra/terraform/clean/brighter.yaml"
	for _, c := range []struct{ path, want string }{
		{bad, bad + ":2:10: Invalid expression"},
		{other, other + ": not a Terraform plan JSON"},
	} {
		io, out, errOut := cmdtest.FakeIO("", false)
		code := run(context.Background(), io, []string{"lint", "--infra", c.path, yaml})
		if code != cmdutil.ExitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("--infra %s: exit %d, stderr %q; want exit %d and %q", c.path, code, errOut, cmdutil.ExitUsage, c.want)
		}
		if !strings.Contains(out.String(), "lint did not complete: ") {
			t.Errorf("--infra %s: the report does not say the lint did not complete: %s", c.path, out)
		}
		// The channels may be declared in the file that could not be
		// read: infra-undeclared would be a false claim.
		if strings.Contains(out.String(), lint.RuleInfraUndeclared) {
			t.Errorf("--infra %s: infra-undeclared though an infrastructure file could not be read:\n%s", c.path, out)
		}
	}
	// The subscriptions file is still linted: its own findings are reported.
	io, out, _ := cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, []string{"lint", "--infra", bad, "../../../testdata/lint/budget-zero.yaml"}); code != cmdutil.ExitUsage || !strings.Contains(out.String(), "budget-zero") {
		t.Errorf("exit %d; the subscriptions file's own finding is missing:\n%s", code, out)
	}
}

// TestLintInfraUnreadableClaimsNoCleanResult: when an infrastructure file
// cannot be read (a syntax error, a path that does not exist, a file of no
// infrastructure format), no output format writes a summary that could pass
// for a clean result: text says the lint did not complete in place of its
// summary line, JSON has "incomplete" and no "summary", SARIF an invocation
// that did not succeed, github an ::error annotation. The exit is 2.
func TestLintInfraUnreadableClaimsNoCleanResult(t *testing.T) {
	tmp := t.TempDir()
	broken := filepath.Join(tmp, "broken.tf")
	if err := os.WriteFile(broken, []byte("resource \"aws_sqs_queue\" \"q\" {\n  name = \"q\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A subscriptions file with no finding of its own, and none --infra
	// could add without the infrastructure: were the summary written, it
	// would be "no findings in 1 file".
	subs := filepath.Join(tmp, "s.yaml")
	if err := os.WriteFile(subs, []byte("subscriptions:\n  - name: o\n    transport: memory\n    requeueCount: 3\n    deadLetterRoutingKey: d\n    handler: {type: builtin, name: ack}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const marker = "lint did not complete: "
	for _, path := range []string{broken, filepath.Join(tmp, "nonexistent"), subs} {
		for _, c := range []struct {
			format   string
			want     []string
			mustNot  []string
			validate func(t *testing.T, out []byte)
		}{
			{"text", []string{marker}, []string{"no findings", "error,", "warning,"}, nil},
			{"json", []string{`"incomplete": "`}, []string{`"summary"`}, func(t *testing.T, out []byte) {
				var rep map[string]any
				if err := json.Unmarshal(out, &rep); err != nil {
					t.Fatalf("not JSON: %v", err)
				}
			}},
			{"sarif", []string{`"executionSuccessful": false`, marker}, nil, func(t *testing.T, out []byte) {
				var rep map[string]any
				if err := json.Unmarshal(out, &rep); err != nil {
					t.Fatalf("not JSON: %v", err)
				}
			}},
			{"github", []string{"::error title=brighter lint::" + marker}, nil, nil},
		} {
			t.Run(filepath.Base(path)+"/"+c.format, func(t *testing.T) {
				io, out, errOut := cmdtest.FakeIO("", false)
				code := run(context.Background(), io, []string{"lint", "-o", c.format, "--infra", path, subs})
				if code != cmdutil.ExitUsage || !strings.Contains(errOut.String(), "--infra: ") {
					t.Errorf("exit %d, stderr %q; want exit %d and the --infra error", code, errOut, cmdutil.ExitUsage)
				}
				for _, w := range c.want {
					if !strings.Contains(out.String(), w) {
						t.Errorf("stdout lacks %q:\n%s", w, out)
					}
				}
				for _, w := range c.mustNot {
					if strings.Contains(out.String(), w) {
						t.Errorf("stdout has %q:\n%s", w, out)
					}
				}
				if c.validate != nil {
					c.validate(t, out.Bytes())
				}
			})
		}
	}
	// Every input read: the summary is written as before.
	io, out, errOut := cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, []string{"lint", subs}); code != cmdutil.ExitOK || out.String() != "no findings in 1 file\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want the clean summary", code, out, errOut)
	}
}

// TestLintInfraConfigConnectorDeadLetterRefByName: a Config Connector
// PubSubSubscription whose deadLetterTopicRef names, by name, a topic no
// file declares sends to that name: a name other than the subscriptions
// file's dead-letter topic is a dead-letter-target-mismatch naming both,
// and the subscription without a namespace is PubSubSubscription/NAME. A
// PubSubTopic of that name declared in another --infra file, whose
// resourceID is the file's topic, wins over the name.
func TestLintInfraConfigConnectorDeadLetterRefByName(t *testing.T) {
	dir := "../../../testdata/infra/krm/rules/dead-letter-target-mismatch"
	_, fs := lintInfra(t, "--infra", dir+"/trigger.yaml", dir+"/brighter.yaml")
	found := false
	for _, f := range fs {
		if f.Rule != lint.RuleDeadLetterTargetMismatch {
			continue
		}
		found = true
		for _, want := range []string{" PubSubSubscription/payments-sub sends ", " to payments-other,", "gcp.deadLetterPolicy.topic is payments-dlq"} {
			if !strings.Contains(f.Message, want) {
				t.Errorf("message %q lacks %q", f.Message, want)
			}
		}
	}
	if !found {
		t.Errorf("no dead-letter-target-mismatch: %+v", fs)
	}
	other := filepath.Join(t.TempDir(), "topics.yaml")
	topic := "apiVersion: pubsub.cnrm.cloud.google.com/v1beta1\nkind: PubSubTopic\nmetadata:\n  name: payments-other\nspec:\n  resourceID: payments-dlq\n"
	if err := os.WriteFile(other, []byte(topic), 0o644); err != nil {
		t.Fatal(err)
	}
	_, fs = lintInfra(t, "--infra", dir+"/trigger.yaml", "--infra", other, dir+"/brighter.yaml")
	for _, f := range fs {
		if f.Rule == lint.RuleDeadLetterTargetMismatch {
			t.Errorf("the declared topic's resourceID did not win over the reference's name: %s", f.Message)
		}
	}
}

// TestLintInfraRetentionCountsTheBackoff: on Pub/Sub a retry policy's
// back-off follows each hold of requeueDelay, so retention-shorter-than-
// budget counts requeueCount x (requeueDelay + the policy's maximum
// back-off). Two subscriptions whose retention outlasts requeueCount x
// requeueDelay + 1h (what the rule once required) are flagged: one with a
// declared retry policy under validate, one with the file's policy under
// create; a third with no retry policy declared is judged by requeueCount
// x requeueDelay and passes.
func TestLintInfraRetentionCountsTheBackoff(t *testing.T) {
	dir := "../../../testdata/infra/terraform/retention-shorter-than-budget/backoff"
	_, fs := lintInfra(t, "--infra", filepath.Join(dir, "pubsub.tf"), filepath.Join(dir, "brighter.yaml"))
	want := map[string]string{
		`subscription "payments"`: "shorter than requeueCount 5 x (requeueDelay 1m + the retry policy's maximum back-off 10m, google_pubsub_subscription.payments's retry policy) + 1h for a dead-letter outage = 1h55m",
		`subscription "refunds"`:  "shorter than requeueCount 3 x (requeueDelay 30s + the retry policy's maximum back-off 10m, gcp.maxRequeueDelay's default, which makeChannels: create sets) + 1h for a dead-letter outage = 1h31m30s",
	}
	got := map[string]string{}
	for _, f := range fs {
		if f.Rule != lint.RuleRetentionShorterThanBudget {
			continue
		}
		sub, _, _ := strings.Cut(f.Message, ":")
		got[sub] = f.Message
		if !strings.Contains(f.Message, want[sub]) || want[sub] == "" {
			t.Errorf("%s:\n got %s\nwant it to contain %q", sub, f.Message, want[sub])
		}
	}
	for sub := range want {
		if got[sub] == "" {
			t.Errorf("%s: not flagged (findings %+v)", sub, fs)
		}
	}
}

// TestLintInfraRetryPolicyRange: with --infra, a Pub/Sub subscription that
// makeChannels: create would give a retry policy Pub/Sub refuses is the
// same Error as without (exit 1), at the subscriptions file's requeueDelay,
// whatever retry policy the infrastructure files declare: create updates
// the subscription's policy to the file's. Under validate the declared
// policy stays and the delay is only cut (the Warning).
func TestLintInfraRetryPolicyRange(t *testing.T) {
	dir := t.TempDir()
	tf := `resource "google_pubsub_topic" "payments" {
  name    = "payments"
  project = "acme-prod"
}

resource "google_pubsub_subscription" "payments" {
  name    = "payments-sub"
  project = "acme-prod"
  topic   = google_pubsub_topic.payments.id

  retry_policy {
    minimum_backoff = "60s"
    maximum_backoff = "600s"
  }
}
`
	file := func(mk string) string {
		return `connections:
  gcp:
    projectId: acme-prod
subscriptions:
  - name: payments
    transport: gcp
    channelName: payments-sub
    routingKey: payments
    makeChannels: ` + mk + `
    requeueCount: -1
    requeueDelay: 15m
    handler: {type: builtin, name: ack}
`
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	infraFile := write("pubsub.tf", tf)
	for _, c := range []struct {
		mk, rule, severity string
		code               int
	}{
		{"create", lint.RuleGCPRetryPolicyRange, "error", cmdutil.ExitFailure},
		{"validate", lint.RuleRequeueDelayExceedsLimit, "warning", cmdutil.ExitOK},
	} {
		t.Run(c.mk, func(t *testing.T) {
			yaml := write(c.mk+".yaml", file(c.mk))
			code, fs := lintInfra(t, "--infra", infraFile, yaml)
			if code != c.code {
				t.Errorf("exit code %d, want %d (findings %+v)", code, c.code, fs)
			}
			var got []infraFinding
			for _, f := range fs {
				if f.Rule == lint.RuleGCPRetryPolicyRange || f.Rule == lint.RuleRequeueDelayExceedsLimit {
					got = append(got, f)
				}
			}
			if len(got) != 1 || got[0].Rule != c.rule || got[0].Severity != c.severity || got[0].File != yaml || got[0].Line != 11 {
				t.Errorf("requeueDelay findings %+v, want one %s %s at %s:11", got, c.severity, c.rule, yaml)
			}
		})
	}
}

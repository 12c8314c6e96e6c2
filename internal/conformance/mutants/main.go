// Command mutants is the mutation check of the test suites: it applies
// each of a maintained catalogue of small deliberate bugs, one at a time, to a temporary copy of the repository, runs the tests named
// for it (go test PKG... -run ...: the conformance cells by default, or the
// tests of any layer's packages), and reports which mutants the tests killed
// (a test failed) and which survived (every test passed). Every mutant must
// be killed by the tests it names; the exit status is 1 when any survived,
// or when a mutant no longer applies (its code moved: update the set).
//
// Usage (from the repository root, as `make mutants` runs it):
//
//	go run ./internal/conformance/mutants [-set all|ci] [-only NAME] [-write docs/conformance.md]
//
// -set ci runs the few mutants CI (make test) has time for; -write replaces
// the table between the mutants markers of docs/conformance.md (with -only,
// the rows of the mutants run; the others keep their recorded rows).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// mutant is one deliberate bug: Old, which must occur exactly once in File,
// is replaced by New; Run is the -run pattern of the tests that must kill
// it, in the packages Pkg names (space-separated go test package patterns;
// "" is ./internal/conformance, the conformance cells).
type mutant struct {
	Name, What string
	File       string
	Old, New   string
	// Pkg names the packages whose tests Run selects (space-separated go
	// test package patterns): "" is the conformance suite
	// (./internal/conformance); a mutant of what no conformance row reaches
	// (lint --live's lookups, an exec handler's process group) names the
	// packages of the tests that kill it.
	Pkg string
	Run string
	CI  bool
	// Race runs Run's tests with the race detector (-race, as make test
	// does): the mutant is a data race no plain run can see.
	Race bool
}

// emulatorMissing are the starts of sqstest's and gcptest's InstallHint: a
// mutant run that fails with one is a setup failure, never a kill.
var emulatorMissing = []string{
	"run `npm ci --no-audit --no-fund` at the repository root",
	"google-cloud-cli-pubsub-emulator (Google's Pub/Sub emulator) is not installed",
}

// conformancePkg is the package a mutant with no Pkg is run against.
const conformancePkg = "./internal/conformance"

// pkgs returns the packages of m's tests.
func (m mutant) pkgs() []string {
	if f := strings.Fields(m.Pkg); len(f) > 0 {
		return f
	}
	return []string{conformancePkg}
}

// cells builds a -run pattern: the test, its fixture/variant path, and the
// rows (ledger ids with "-" removed and "/" as "_").
func cells(test, path string, rows ...string) string {
	return test + "/" + path + "/^(" + strings.Join(rows, "|") + ")$"
}

const (
	sqsStd = "TestSQSConformance"
	pubsub = "TestPubSubConformance"
	rmq    = "TestRocketMQConformance"
)

// catalogue returns every maintained mutant: the conformance set below and
// the per-issue sets in set_*.go files (one file per area, so parallel work
// appends without touching this list).
func catalogue() []mutant {
	return slices.Concat(append([][]mutant{set}, extraSets()...)...)
}

// set is the maintained list of conformance mutants.
var set = []mutant{
	{Name: "count-sqs", What: "SQS count rule ignores ApproximateReceiveCount",
		File: "internal/broker/sqs/decode.go",
		Old:  "broker.PresentedCount(m.Header.HandledCount, attempt, m.HasRejectionMetadata())",
		New:  "broker.PresentedCount(m.Header.HandledCount, 1, m.HasRejectionMetadata())",
		Run:  cells(sqsStd, "SqsStandard/consumer", "AC42"), CI: true},
	{Name: "count-pubsub", What: "Pub/Sub count rule ignores delivery_attempt",
		File: "internal/broker/gcp/count.go",
		Old:  "return broker.PresentedCount(stamped, a, routedCopy)",
		New:  "return broker.PresentedCount(stamped, 1+0*a, routedCopy)",
		Run:  cells(pubsub, "^Pull$/consumer", "AC42")},
	{Name: "count-rocketmq", What: "RocketMQ count rule ignores DeliveryAttempt",
		File: "internal/broker/rocketmq/count.go",
		Old:  "return broker.PresentedCount(stamped, int(attempt), routedCopy)",
		New:  "return broker.PresentedCount(stamped, 1, routedCopy)",
		Run:  rmq + "/^AC42$"},
	{Name: "r28-sqs", What: "SQS: a routed copy presents the dead-letter queue's own count (R-28 discriminator off)",
		File: "internal/broker/sqs/decode.go",
		Old:  "broker.PresentedCount(m.Header.HandledCount, attempt, m.HasRejectionMetadata())",
		New:  "broker.PresentedCount(m.Header.HandledCount, attempt, false)",
		Run:  cells(sqsStd, "SqsStandard/reactor", "AC3", "AC4", "AC41")},
	{Name: "r28-pubsub", What: "Pub/Sub: a routed copy presents the reader's delivery_attempt (R-28 discriminator off)",
		File: "internal/broker/gcp/count.go",
		Old:  "DeliveryCount(m.Header.HandledCount, attempt, m.HasRejectionMetadata())",
		New:  "DeliveryCount(m.Header.HandledCount, attempt, false)",
		Run:  cells(pubsub, "^Pull$/reactor", "AC3", "AC4", "AC41")},
	{Name: "r28-rocketmq", What: "RocketMQ: a routed copy presents the reader group's attempt (R-28 discriminator off)",
		File: "internal/broker/rocketmq/consumer.go",
		Old:  "DeliveryCount(m.Header.HandledCount, attempt, m.HasRejectionMetadata())",
		New:  "DeliveryCount(m.Header.HandledCount, attempt, false)",
		Run:  rmq + "/reactor/^(AC3|AC4|AC41)$"},
	{Name: "budget-compare", What: "budget compared with > instead of >= (one delivery too many)",
		File: "internal/pump/settle.go",
		Old:  "budget != -1 && spent >= budget",
		New:  "budget != -1 && spent > budget",
		Run:  cells(sqsStd, "SqsStandard/reactor", "AC3", "AC6_AC35"), CI: true},
	{Name: "routing-order", What: "the original is acknowledged before the routed copy is published",
		File: "internal/broker/routing.go",
		Old:  "\trouted := message.Stamp(stamped, dest, rej, now())\n",
		New:  "\t_ = r.acknowledge(ctx, m)\n\trouted := message.Stamp(stamped, dest, rej, now())\n",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R19")},
	{Name: "failed-publish-acks", What: "a failed publish is treated as routed (the original is acknowledged)",
		File: "internal/broker/routing.go",
		Old:  "\tif err != nil {\n\t\tres.Released = true",
		New:  "\tif err != nil && false {\n\t\tres.Released = true",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R19")},
	{Name: "failed-publish-no-release", What: "a failed publish leaves the original leased instead of releasing it",
		File: "internal/broker/routing.go",
		Old:  "if rerr := r.release(ctx, m, res.ReleaseDelay); rerr != nil {",
		New:  "if rerr := error(nil); rerr != nil {",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R19")},
	{Name: "meta-originalTopic", What: "originalTopic names the destination instead of the source",
		File: "internal/message/metadata.go",
		Old:  "c.Header.Bag[KeyOriginalTopic] = m.Header.Topic",
		New:  "c.Header.Bag[KeyOriginalTopic] = destination",
		Run:  cells(sqsStd, "SqsStandard/reactor", "AC3", "AC4")},
	{Name: "meta-rejectionTimestamp", What: "rejectionTimestamp in a layout that does not parse",
		File: "internal/message/metadata.go",
		Old:  "now.UTC().Format(RejectionTimestampLayout)",
		New:  "now.UTC().Format(time.Kitchen)",
		Run:  cells(sqsStd, "SqsStandard/reactor", "AC3", "AC4")},
	{Name: "meta-originalMessageType", What: "originalMessageType always MT_EVENT",
		File: "internal/message/metadata.go",
		Old:  "c.Header.Bag[KeyOriginalMessageType] = m.Header.MessageType.String()\n\tif m.WireMessageType != \"\" {",
		New:  "c.Header.Bag[KeyOriginalMessageType] = \"MT_EVENT\"\n\tif false {",
		Run:  cells(sqsStd, "SqsStandard/reactor", "AC3", "AC4")},
	{Name: "meta-rejectionReason", What: "rejectionReason always DeliveryError",
		File: "internal/message/metadata.go",
		Old:  "c.Header.Bag[KeyRejectionReason] = r.Reason.String()",
		New:  "c.Header.Bag[KeyRejectionReason] = message_reasonDeliveryError",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R16_unacceptable")},
	{Name: "meta-rejectionMessage", What: "rejectionMessage written empty",
		File: "internal/message/metadata.go",
		Old:  "c.Header.Bag[KeyRejectionMessage] = TruncateBytes(r.Description, MaxRejectionText)",
		New:  "c.Header.Bag[KeyRejectionMessage] = \"\"",
		Run:  cells(sqsStd, "SqsStandard/reactor", "AC3", "AC4")},
	{Name: "route-invalid", What: "Unacceptable ignores the invalid-message channel",
		File: "internal/broker/routing.go",
		Old:  "\t\tif r.Invalid != \"\" {\n\t\t\treturn RouteInvalidMessage",
		New:  "\t\tif false {\n\t\t\treturn RouteInvalidMessage",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R16_unacceptable")},
	{Name: "route-fallback", What: "Unacceptable with no invalid-message channel does not fall back to the dead-letter queue",
		File: "internal/broker/routing.go",
		Old:  "\t\tif r.DeadLetter != \"\" {\n\t\t\treturn RouteDeadLetter, r.DeadLetter, true",
		New:  "\t\tif false {\n\t\t\treturn RouteDeadLetter, r.DeadLetter, true",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R16_fallback")},
	{Name: "proactor-batch-ack", What: "the Proactor's batch acknowledgement acknowledges nothing",
		File: "internal/pump/settler.go",
		Old:  "errs := ba.AcknowledgeBatch(ctx, ms)",
		New:  "errs, _ := make([]error, len(ms)), ctx",
		Run:  cells(sqsStd, "SqsStandard/proactor", "AC2")},
	{Name: "single-ack", What: "an acknowledgement one by one does nothing (Reactor; Proactor without batch acknowledgement)",
		File: "internal/pump/settle.go",
		Old:  "\t\terr := p.consumer.Acknowledge(ctx, m)\n",
		New:  "\t\terr, _ := error(nil), ctx\n",
		Run:  rmq + "/proactor/^AC2$"},
	{Name: "requeue-acks", What: "a deferral acknowledges instead of requeueing",
		File: "internal/pump/settle.go",
		Old:  "err := p.consumer.Requeue(ctx, m, delay)",
		New:  "err := p.consumer.Acknowledge(ctx, m)",
		Run:  cells(sqsStd, "SqsStandard/proactor", "AC1")},
	{Name: "discard-no-ack", What: "no destination: the rejected message is not acknowledged",
		File: "internal/broker/routing.go",
		Old:  "if err := r.acknowledge(ctx, m); err != nil {\n\t\t\tres.Err = fmt.Errorf(\"acknowledge rejected message",
		New:  "if err := error(nil); err != nil {\n\t\t\tres.Err = fmt.Errorf(\"acknowledge rejected message",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R17"), CI: true},
	{Name: "discard-warn-level", What: "no destination: the Warning logged at Info",
		File: "internal/broker/routing.go",
		Old:  "log.WarnContext(ctx, LogDiscarded,",
		New:  "log.InfoContext(ctx, LogDiscarded,",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R17")},
	{Name: "discard-warn-reason", What: "no destination: the Warning does not name the reason",
		File: "internal/broker/routing.go",
		Old:  "\"message_id\", id, \"reason\", rej.Reason.String(), \"description\", rej.Description)",
		New:  "\"message_id\", id, \"description\", rej.Description)",
		Run:  cells(pubsub, "^Pull$/reactor", "AC17")},
	{Name: "requeue-delay-pubsub", What: "Pub/Sub pull requeue ignores the delay (ModifyAckDeadline 0)",
		File: "internal/broker/gcp/pull.go",
		Old:  "secs := int32(c.AppliedDelay(delay) / time.Second)",
		New:  "secs := int32(0 * delay)",
		Run:  cells(pubsub, "^Pull$/reactor", "R7_requeuedelay")},
	{Name: "requeue-delay-pump", What: "the pump drops the subscription's requeueDelay",
		File: "internal/pump/settle.go",
		Old:  "delay = p.opts.RequeueDelay",
		New:  "delay = 0 * p.opts.RequeueDelay",
		Run:  cells(sqsStd, "SqsStandard/proactor", "R7_requeuedelay")},
	{Name: "lease-extension-to-cap", What: "a lease extension reaches the cap (first lease plus maxLeaseExtension) at once instead of one lease from now: a killed replica's messages stay away for the cap",
		File: "internal/pump/lease_schedule.go",
		Old:  "ext := min(l.lease, left)",
		New:  "ext := left",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R4_replicakilled")},
	{Name: "stream-timed-shutdown", What: "the Pub/Sub stream client shuts down on a timer (the stream cancelled first): the last acknowledgements are dropped and Google's emulator goes on delivering to the dead stream",
		File: "internal/broker/gcp/stream.go",
		Old:  "pubsub.ShutdownOptions{Behavior: pubsub.ShutdownBehaviorWaitForProcessing, Timeout: -1}",
		New:  "pubsub.ShutdownOptions{Behavior: pubsub.ShutdownBehaviorNackImmediately, Timeout: 5 * time.Second}",
		Run:  cells(pubsub, "^Stream$/reactor", "R4_replicastopped")},
}

func init() {
	// metadata.go is package message: it cannot name message.ReasonDeliveryError.
	for i := range set {
		set[i].New = strings.ReplaceAll(set[i].New, "message_reasonDeliveryError", "ReasonDeliveryError.String()")
	}
}

// result of one mutant.
type result struct {
	m       mutant
	verdict string // killed, SURVIVED, stale, build failed
	took    time.Duration
	detail  string
}

func main() {
	which := flag.String("set", "all", "all, or ci (the subset make test runs)")
	only := flag.String("only", "", "run only the mutants with these names (comma-separated)")
	write := flag.String("write", "", "replace the mutants table in this markdown file (docs/conformance.md)")
	tableOut := flag.String("table", "", "also write the table section to this file")
	timeout := flag.Duration("timeout", 10*time.Minute, "go test timeout per mutant")
	parallel := flag.Int("parallel", 1, "how many mutants run at once (each in its own copy of the tree)")
	flag.Parse()
	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	// Every emulator the tests start must be installable from the copy:
	// without node_modules every SQS test fails, and a failure for that
	// reason would be counted as a kill.
	if _, err := os.Stat(filepath.Join(root, "node_modules", "fauxqs", "package.json")); err != nil {
		fail(fmt.Errorf("node_modules/fauxqs is missing: run `make deps` (npm ci) first, or use `make mutants`: %w", err))
	}
	var picked []mutant
	for _, m := range catalogue() {
		if (*which == "ci" && !m.CI) || (*only != "" && !slices.Contains(strings.Split(*only, ","), m.Name)) {
			continue
		}
		picked = append(picked, m)
	}
	results := runAll(root, picked, *timeout, *parallel)
	bad := false
	for _, r := range results {
		if r.verdict != "killed" {
			bad = true
		}
	}
	if *tableOut != "" {
		if err := os.WriteFile(*tableOut, []byte(table(catalogue(), results, nil)), 0o644); err != nil {
			fail(err)
		}
	}
	if *write != "" && (*which == "all" || *only != "") {
		if err := writeTable(*write, results); err != nil {
			fail(err)
		}
	}
	if bad {
		fmt.Println("mutants: some mutants were not killed by the conformance suite")
		os.Exit(1)
	}
	fmt.Printf("mutants: all %d killed\n", len(results))
}

// runAll runs ms, at most parallel at once (each in its own copy of the
// tree, so they cannot see each other's change), prints each result as it
// comes, and returns the results in the order of ms.
func runAll(root string, ms []mutant, timeout time.Duration, parallel int) []result {
	results := make([]result, len(ms))
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex // orders the printed lines
		sem = make(chan struct{}, max(parallel, 1))
	)
	for i, m := range ms {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := runMutant(root, m, timeout)
			mu.Lock()
			fmt.Printf("%-28s %-12s %6.0fs  %s\n", m.Name, r.verdict, r.took.Seconds(), r.detail)
			mu.Unlock()
			results[i] = r
		}()
	}
	wg.Wait()
	return results
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mutants:", err)
	os.Exit(2)
}

// runMutant copies the tree, applies m and runs its cells.
func runMutant(root string, m mutant, timeout time.Duration) result {
	start := time.Now()
	r := result{m: m}
	dir, err := os.MkdirTemp("", "brighter-mutant-")
	if err != nil {
		r.verdict, r.detail = "stale", err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	if err := copyTree(root, dir); err != nil {
		r.verdict, r.detail = "stale", err.Error()
		return r
	}
	path := filepath.Join(dir, m.File)
	src, err := os.ReadFile(path)
	if err != nil {
		r.verdict, r.detail = "stale", err.Error()
		return r
	}
	if n := bytes.Count(src, []byte(m.Old)); n != 1 {
		r.verdict, r.detail = "stale", fmt.Sprintf("%s: the mutated code occurs %d times, want 1: update the mutant", m.File, n)
		return r
	}
	if err := os.WriteFile(path, bytes.Replace(src, []byte(m.Old), []byte(m.New), 1), 0o644); err != nil {
		r.verdict, r.detail = "stale", err.Error()
		return r
	}
	// -trimpath, as make test builds: the copy's packages are then cached
	// by content, not by the copy's directory, so only the mutated package
	// and those that import it are compiled again, not the whole module
	// once per mutant.
	args := []string{"test", "-trimpath", "-count=1", "-timeout", timeout.String(), "-run", m.Run}
	if m.Race {
		args = append(args, "-race")
	}
	args = append(args, m.pkgs()...)
	out, err := goCmd(dir, timeout+time.Minute, args...)
	r.took = time.Since(start)
	switch {
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		r.verdict, r.detail = "build failed", lastLines(out, 5)
	case slices.ContainsFunc(emulatorMissing, func(hint string) bool { return bytes.Contains(out, []byte(hint)) }):
		// The tests failed because an emulator could not start, not because
		// of the mutant: that proves nothing.
		r.verdict, r.detail = "setup failed", lastLines(out, 5)
	case err == nil && bytes.Count(out, []byte("no tests to run")) >= len(m.pkgs()):
		r.verdict, r.detail = "stale", "the -run pattern matched no test: "+m.Run
	case err == nil:
		r.verdict, r.detail = "SURVIVED", "every test of "+m.Run+" in "+strings.Join(m.pkgs(), " ")+" passed"
	default:
		r.verdict, r.detail = "killed", firstFail(out)
	}
	return r
}

func goCmd(dir string, d time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BRIGHTER_UPDATE_LEDGER=")
	return cmd.CombinedOutput()
}

// copyTree copies the files git knows (tracked and untracked, not
// ignored) and links node_modules (the SQS emulator).
func copyTree(root, dst string) error {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("list files: %w", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		if err := copyFile(filepath.Join(root, f), filepath.Join(dst, f)); err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree
			}
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules")); err == nil {
		return os.Symlink(filepath.Join(root, "node_modules"), filepath.Join(dst, "node_modules"))
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil || st.IsDir() {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// firstFail returns the failing cells (the most specific failing tests)
// from go test output, and the first failure message.
func firstFail(out []byte) string {
	var names []string
	msg := ""
	for _, l := range strings.Split(string(out), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "--- FAIL: ") {
			name := strings.Fields(strings.TrimPrefix(t, "--- FAIL: "))[0]
			for i, n := range names {
				if strings.HasPrefix(name, n+"/") {
					names = append(names[:i], names[i+1:]...)
					break
				}
			}
			names = append(names, name)
		} else if msg == "" && strings.Contains(t, ".go:") && !strings.Contains(t, "(retried)") {
			msg = t
		}
	}
	if len(names) == 0 {
		return lastLines(out, 3)
	}
	if len(msg) > 160 {
		msg = msg[:160] + "..."
	}
	return strings.Join(names, ", ") + ": " + msg
}

func lastLines(out []byte, n int) string {
	ls := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " / ")
}

// Markers of the mutants table in docs/conformance.md (the ledger keeps
// what lies between them when it regenerates the file).
const (
	beginMarker = "<!-- mutants:begin -->"
	endMarker   = "<!-- mutants:end -->"
)

// writeTable replaces the mutants table of the markdown file at path: one
// row per catalogue mutant, in catalogue order; a mutant run now gets a new
// row, one not run keeps its recorded row (a run of -only NAME records NAME
// alone), one never recorded says so, and a row of a mutant the catalogue
// no longer has is dropped.
func writeTable(path string, results []result) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	s := string(doc)
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s ... %s section (regenerate it with make conformance-ledger)", path, beginMarker, endMarker)
	}
	s = s[:i] + table(catalogue(), results, recordedRows(s[i:j])) + s[j+len(endMarker)+1:]
	return os.WriteFile(path, []byte(s), 0o644)
}

// recordedRows returns the table rows of section by mutant name.
func recordedRows(section string) map[string]string {
	rows := map[string]string{}
	for _, l := range strings.Split(section, "\n") {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		name := strings.TrimSuffix(strings.TrimSpace(strings.SplitN(l[2:], "|", 2)[0]), " (CI)")
		rows[name] = l
	}
	return rows
}

// row renders one result, run on date, as a table row.
func row(r result, date string) string {
	by := ""
	if r.verdict == "killed" {
		by = r.detail
	}
	ci := ""
	if r.m.CI {
		ci = " (CI)"
	}
	run := strings.ReplaceAll(r.m.Run, "|", `\|`)
	if r.m.Pkg != "" {
		run = strings.Join(r.m.pkgs(), " ") + " -run " + run
	}
	return fmt.Sprintf("| %s%s | %s | %s | `%s` | %s | %s | %s |", r.m.Name, ci, r.m.What, r.m.File, run,
		date, r.verdict, strings.ReplaceAll(by, "|", `\|`))
}

// table renders the section between the markers: a row for each mutant of
// cat, from results when it was run now, else from recorded.
func table(cat []mutant, results []result, recorded map[string]string) string {
	now := map[string]result{}
	for _, r := range results {
		now[r.m.Name] = r
	}
	var b strings.Builder
	b.WriteString(beginMarker + "\n")
	b.WriteString("Recorded by `make mutants` (a row by `go run ./internal/conformance/mutants -only NAME -write docs/conformance.md`): each mutant applied alone to a copy of the tree, then the tests named run against it (packages, -run pattern; the conformance cells when no package is named). TestCatalogueRecorded (internal/conformance/mutants) checks that every mutant of the catalogue still applies and has a row here, killed.\n\n")
	b.WriteString("| mutant | deliberate bug | file | tests run | run on | verdict | killed by |\n|---|---|---|---|---|---|---|\n")
	for _, m := range cat {
		switch r, ok := now[m.Name]; {
		case ok:
			b.WriteString(row(r, time.Now().UTC().Format("2006-01-02")) + "\n")
		case recorded[m.Name] != "":
			b.WriteString(recorded[m.Name] + "\n")
		default:
			b.WriteString(row(result{m: m, verdict: "not recorded"}, "") + "\n")
		}
	}
	b.WriteString(endMarker + "\n")
	return b.String()
}

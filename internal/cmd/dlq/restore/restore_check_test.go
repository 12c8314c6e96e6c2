package restore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
	"github.com/brightergo/brighter/internal/inspect"
)

// writeArchive writes lines (archive records, one a line) to dir/a.jsonl
// and returns its path.
func writeArchive(t *testing.T, dir, lines string) string {
	t.Helper()
	archive := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(archive, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	return archive
}

// TestDLQRestore_RefusesIDsAlreadyThere: a restore whose file holds an id
// the dead-letter queue already holds is refused (exit 2) naming the id,
// publishing nothing; --dry-run lists what would happen and publishes
// nothing; --yes restores all the same, and stats and peek then count
// every copy, the duplicate too, and the retry history records the
// restores of the run that published (fauxqs).
func TestDLQRestore_RefusesIDsAlreadyThere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := dlqtest.FauxqsQueues(t, "rc", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	if err := p.Send(ctx, dlqtest.Stamped("a-"+run, dest, dlq)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lines := `{"id":"a-` + run + `","topic":"` + dest + `","body":"{}"}` + "\n" + `{"id":"b-` + run + `","topic":"` + dest + `","body":"{}"}` + "\n"
	archive := writeArchive(t, dir, lines)
	restore := append([]string{"dlq", "restore", archive, "-s", "sqs://" + dlq}, conn...)
	inDLQ := func() []string {
		return cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "sqs://" + dlq, "-o", "json"}, conn...)...)
	}

	code, out, errOut := cmdtest.BrighterExit(t, dir, append(restore, "--dry-run")...)
	if code != cmdutil.ExitOK || !strings.Contains(out, "would restore a-"+run+" -> "+dlq+" (already there: 1 copy)") || !strings.Contains(out, "would restore b-"+run+" -> "+dlq+"\n") {
		t.Fatalf("restore --dry-run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if ids := inDLQ(); len(ids) != 1 {
		t.Fatalf("after --dry-run the queue holds %v, want only a-%s", ids, run)
	}
	code, out, errOut = cmdtest.BrighterExit(t, dir, restore...)
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "already holds 1 id") || !strings.Contains(errOut, "a-"+run) || !strings.Contains(errOut, "--yes") {
		t.Fatalf("restore of an id already there: exit %d, want %d naming it\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	if ids := inDLQ(); len(ids) != 1 {
		t.Fatalf("after the refusal the queue holds %v, want only a-%s (nothing published)", ids, run)
	}
	if code, out, errOut := cmdtest.BrighterExit(t, dir, append(restore, "--yes")...); code != cmdutil.ExitOK || !strings.Contains(out, "restored 2, skipped 0, failed 0") {
		t.Fatalf("restore --yes: exit %d\n%s%s", code, out, errOut)
	}
	if ids := inDLQ(); !dlqtest.SameIDs(ids, "a-"+run, "a-"+run, "b-"+run) {
		t.Fatalf("after restore --yes the queue shows %v, want a twice and b", ids)
	}
	// The retry history (the tests' shared state directory, cmdtest.Env)
	// holds the two records the --yes run published, as restores from the
	// archive file into the DLQ; the dry run and the refusal recorded
	// nothing.
	history := filepath.Join(cmdtest.StateDir(), "brighter", "replay", "retries.jsonl")
	rs, err := inspect.ReadRetryHistory(history, func(r inspect.Retry) bool { return strings.HasSuffix(r.ID, "-"+run) })
	if err != nil || len(rs) != 2 {
		t.Fatalf("retry history %s: %+v (%v), want the 2 restores of the --yes run", history, rs, err)
	}
	for _, r := range rs {
		if !r.IsRestore() || r.From != archive || r.To != dlq || r.At.IsZero() {
			t.Errorf("history record %+v, want a restore from %s to %s", r, archive, dlq)
		}
	}
	if code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "stats", "sqs://" + dlq}, conn...)...); code != cmdutil.ExitOK || !strings.Contains(errOut, "3 counted, 3 read") {
		t.Fatalf("stats after the duplicate restore: exit %d, want 3 counted\n%s%s", code, out, errOut)
	}
}

// TestDLQRestore_DryRunFailsWhatTheRunWould: an archive record whose body
// SQS cannot carry (a binary application/octet-stream body, as a Pub/Sub
// archive holds) fails restore --dry-run (exit 1, naming the body) as it
// fails the real run, and both publish nothing of it; the other record is
// listed as would-restore by the dry run and restored by the real one
// (fauxqs).
func TestDLQRestore_DryRunFailsWhatTheRunWould(t *testing.T) {
	t.Parallel()
	run, _, conn := dlqtest.FauxqsQueues(t, "rd", "dlq")
	dlq := "dlq-" + run
	dir := t.TempDir()
	lines := `{"id":"bin-` + run + `","topic":"t","contentType":"application/octet-stream","body":"//4A","bodyEncoding":"base64"}` + "\n" +
		`{"id":"txt-` + run + `","topic":"t","body":"{}"}` + "\n"
	archive := writeArchive(t, dir, lines)
	restore := append([]string{"dlq", "restore", archive, "-s", "sqs://" + dlq}, conn...)
	for _, dry := range []bool{true, false} {
		args := restore
		if dry {
			args = append(args[:len(args):len(args)], "--dry-run")
		}
		code, out, errOut := cmdtest.BrighterExit(t, dir, args...)
		if code != cmdutil.ExitFailure || !strings.Contains(out, "failed bin-"+run+": publish to "+dlq+": ") || !strings.Contains(out, "not UTF-8 text") {
			t.Fatalf("restore of a binary body into SQS (dry run %v): exit %d, want %d naming the body SQS cannot carry\nstdout:\n%s\nstderr:\n%s", dry, code, cmdutil.ExitFailure, out, errOut)
		}
		if dry && !strings.Contains(out, "would restore txt-"+run+" -> "+dlq+"\n") || dry && !strings.Contains(out, "would restore 1, skipped 0, already there 0, failed 1") {
			t.Fatalf("restore --dry-run: want the text record listed and the summary counting 1 failed\n%s", out)
		}
		if ids := cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "sqs://" + dlq, "-o", "json"}, conn...)...); dry && len(ids) != 0 || !dry && !dlqtest.SameIDs(ids, "txt-"+run) {
			t.Fatalf("after the restore (dry run %v) the queue holds %v", dry, ids)
		}
	}
}

// TestDLQRestore_RefusesInvalidUTF8: a hand-edited archive
// record whose JSON holds bytes that are not UTF-8 (here in a body said to
// be "bodyEncoding":"utf8") is refused naming its line (exit 2), as a bad
// base64 body is, and nothing is published: JSON decoding would otherwise
// turn each such byte into U+FFFD and restore a changed body (fauxqs).
func TestDLQRestore_RefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	run, _, conn := dlqtest.FauxqsQueues(t, "ru", "dlq")
	dlq := "dlq-" + run
	dir := t.TempDir()
	lines := `{"id":"ok-` + run + `","topic":"t","body":"{}"}` + "\n" +
		`{"id":"bad-` + run + `","topic":"t","body":"x` + "\xff\xfe" + `","bodyEncoding":"utf8"}` + "\n"
	archive := writeArchive(t, dir, lines)
	code, out, errOut := cmdtest.BrighterExit(t, dir, append([]string{"dlq", "restore", archive, "-s", "sqs://" + dlq}, conn...)...)
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, archive+":2: ") || !strings.Contains(errOut, "not UTF-8") {
		t.Fatalf("restore of a record holding invalid UTF-8: exit %d, want %d naming line 2\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	if ids := cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "sqs://" + dlq, "-o", "json"}, conn...)...); len(ids) != 0 {
		t.Fatalf("after the refusal the queue holds %v, want nothing", ids)
	}
}

// TestDLQRestore_DryRunRefusesCharactersSQSRefuses: archive records whose
// bodies hold characters SQS does not take (U+0001, U+0000, U+FFFE) fail
// restore --dry-run (exit 1), each naming its character in the words of
// SQS's own refusal, as they fail the real run; the other record is listed
// as would-restore by the dry run and restored by the real one (fauxqs).
func TestDLQRestore_DryRunRefusesCharactersSQSRefuses(t *testing.T) {
	t.Parallel()
	run, _, conn := dlqtest.FauxqsQueues(t, "rx", "dlq")
	dlq := "dlq-" + run
	dir := t.TempDir()
	bad := map[string]string{"c1-" + run: `bad\u0001x`, "c0-" + run: `a\u0000b`, "fffe-" + run: `a\ufffeb`}
	named := map[string]string{"c1-" + run: "the body holds U+0001 at byte 3", "c0-" + run: "the body holds U+0000 at byte 1", "fffe-" + run: "the body holds U+FFFE at byte 1"}
	lines := `{"id":"ok-` + run + `","topic":"t","body":"{}"}` + "\n"
	for id, body := range bad {
		lines += `{"id":"` + id + `","topic":"t","body":"` + body + `"}` + "\n"
	}
	archive := writeArchive(t, dir, lines)
	restore := append([]string{"dlq", "restore", archive, "-s", "sqs://" + dlq}, conn...)
	for _, dry := range []bool{true, false} {
		args := restore
		if dry {
			args = append(args[:len(args):len(args)], "--dry-run")
		}
		code, out, errOut := cmdtest.BrighterExit(t, dir, args...)
		if code != cmdutil.ExitFailure {
			t.Fatalf("restore of bodies SQS refuses (dry run %v): exit %d, want %d\nstdout:\n%s\nstderr:\n%s", dry, code, cmdutil.ExitFailure, out, errOut)
		}
		for id, words := range named {
			line := "failed " + id + ": publish to " + dlq + ": "
			i := strings.Index(out, line)
			if i < 0 || !strings.Contains(strings.SplitN(out[i:], "\n", 2)[0], "SQS refused the message's characters (InvalidMessageContents): "+words+"; SQS takes #x9") {
				t.Fatalf("restore (dry run %v): want %s failed naming %q\nstdout:\n%s\nstderr:\n%s", dry, id, words, out, errOut)
			}
		}
		if dry && !strings.Contains(out, "would restore ok-"+run+" -> "+dlq+"\n") || dry && !strings.Contains(out, "would restore 1, skipped 0, already there 0, failed 3") {
			t.Fatalf("restore --dry-run: want the good record listed and the summary counting 3 failed\n%s", out)
		}
		if ids := cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "sqs://" + dlq, "-o", "json"}, conn...)...); dry && len(ids) != 0 || !dry && !dlqtest.SameIDs(ids, "ok-"+run) {
			t.Fatalf("after the restore (dry run %v) the queue holds %v", dry, ids)
		}
	}
}

// TestDLQRestore_ProgressShowsControlCharactersEscaped: an archive record
// whose id holds terminal control characters (ESC, BEL) is named in
// restore's progress lines with them escaped (\x1b, \a), never raw, so an
// archive cannot drive the operator's terminal (fauxqs, a dry run and a
// run: SQS refuses those characters, and the failure names the id too).
func TestDLQRestore_ProgressShowsControlCharactersEscaped(t *testing.T) {
	t.Parallel()
	run, _, conn := dlqtest.FauxqsQueues(t, "resc", "dlq")
	dlq := "dlq-" + run
	dir := t.TempDir()
	archive := writeArchive(t, dir, `{"id":"esc-`+run+`\u001b[31mred\u0007","topic":"t","body":"{}"}`+"\n")
	restore := append([]string{"dlq", "restore", archive, "-s", "sqs://" + dlq}, conn...)
	for _, dry := range []bool{true, false} {
		args := restore
		if dry {
			args = append(args[:len(args):len(args)], "--dry-run")
		}
		_, out, errOut := cmdtest.BrighterExit(t, dir, args...)
		if strings.ContainsAny(out+errOut, "\x1b\a") {
			t.Fatalf("restore (dry run %v) wrote control characters raw:\nstdout: %q\nstderr: %q", dry, out, errOut)
		}
		if !strings.Contains(out, `esc-`+run+`\x1b[31mred\a`) {
			t.Fatalf("restore (dry run %v) does not name the record with its control characters escaped:\nstdout: %q", dry, out)
		}
	}
}

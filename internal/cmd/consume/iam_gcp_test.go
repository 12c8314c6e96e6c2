package consume_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestConsume_IAMWarningOnEmulatorSaysExpected: `brighter consume` of a
// subscription with a native DeadLetterPolicy on Google's emulator logs
// R-20's two Warnings (the emulator has no IAM service), each saying that
// it is expected on the emulator (note=) rather than giving the gcloud
// command for a real project (fix=), and starts.
func TestConsume_IAMWarningOnEmulatorSaysExpected(t *testing.T) {
	t.Parallel() // a project of its own on the shared emulator
	file := nativeDeadLetterConfig(t, "iam-note", t.TempDir(), "serviceAccount:test@example.iam.gserviceaccount.com")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := runConsume(ctx, file, cmdtest.AnyListen)
	c.waitReady(t, 60*time.Second, cancel, "")
	cancel()
	if code := <-c.code; code != cmdutil.ExitOK {
		t.Fatalf("consume exited %d; stderr:\n%s", code, c.stderr.String())
	}
	warnings := iamWarnings(c.stderr.String())
	if len(warnings) != 2 {
		t.Fatalf("%d IAM warnings, want 2 (one per binding); stderr:\n%s", len(warnings), c.stderr.String())
	}
	for _, w := range warnings {
		if !strings.Contains(w, fmt.Sprintf("note=%q", gcp.NoteIAMOnEmulator)) || strings.Contains(w, "fix=") {
			t.Errorf("the warning does not say it is expected on the emulator (or gives a real project's fix):\n%s", w)
		}
	}
}

// nativeDeadLetterConfig starts a project of its own, named after prefix,
// on the shared Pub/Sub emulator and writes dir/brighter.yaml for it: one
// subscription, payments (channel payments-sub, topic payments), with
// requeueCount 3, the builtin ack handler and a native DeadLetterPolicy
// (topic payments-native, 5 delivery attempts). member, unless "", is the
// member of both IAM bindings (subscriberMember, publisherMember); with ""
// neither is set, so each is derived from the project number. It returns
// the file's path.
func nativeDeadLetterConfig(t *testing.T, prefix, dir, member string) string {
	t.Helper()
	_, srv := gcptest.Start(t, prefix, nil, gcp.Connect)
	subscriberMember, publisherMember := "", ""
	if member != "" {
		subscriberMember = "\n      subscriberMember: " + member
		publisherMember = "\n        publisherMember: " + member
	}
	file := filepath.Join(dir, "brighter.yaml")
	listenMust(t, os.WriteFile(file, []byte(fmt.Sprintf(`connections:
  gcp: {projectId: %s, emulatorHost: %s}
subscriptions:
  - name: payments
    transport: gcp
    channelName: payments-sub
    routingKey: payments
    requeueCount: 3
    handler: {type: builtin, name: ack}
    gcp:%s
      deadLetterPolicy:
        topic: payments-native
        maxDeliveryAttempts: 5%s
`, srv.Project, srv.Addr, subscriberMember, publisherMember)), 0o600))
	return file
}

// iamWarnings returns the lines of stderr that are R-20's Warning
// (gcp.LogIAMTolerated), one per binding abandoned or skipped.
func iamWarnings(stderr string) []string {
	var warnings []string
	for l := range strings.Lines(stderr) {
		if strings.Contains(l, gcp.LogIAMTolerated) {
			warnings = append(warnings, l)
		}
	}
	return warnings
}

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
	_, srv := gcptest.Start(t, "iam-note", nil, gcp.Connect)
	file := filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := fmt.Sprintf(`connections:
  gcp: {projectId: %s, emulatorHost: %s}
subscriptions:
  - name: payments
    transport: gcp
    channelName: payments-sub
    routingKey: payments
    requeueCount: 3
    handler: {type: builtin, name: ack}
    gcp:
      subscriberMember: serviceAccount:test@example.iam.gserviceaccount.com
      deadLetterPolicy:
        topic: payments-native
        maxDeliveryAttempts: 5
        publisherMember: serviceAccount:test@example.iam.gserviceaccount.com
`, srv.Project, srv.Addr)
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := runConsume(ctx, file, cmdtest.AnyListen)
	c.waitReady(t, 60*time.Second, cancel, "")
	cancel()
	if code := <-c.code; code != cmdutil.ExitOK {
		t.Fatalf("consume exited %d; stderr:\n%s", code, c.stderr.String())
	}
	var warnings []string
	for l := range strings.Lines(c.stderr.String()) {
		if strings.Contains(l, gcp.LogIAMTolerated) {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 2 {
		t.Fatalf("%d IAM warnings, want 2 (one per binding); stderr:\n%s", len(warnings), c.stderr.String())
	}
	for _, w := range warnings {
		if !strings.Contains(w, fmt.Sprintf("note=%q", gcp.NoteIAMOnEmulator)) || strings.Contains(w, "fix=") {
			t.Errorf("the warning does not say it is expected on the emulator (or gives a real project's fix):\n%s", w)
		}
	}
}

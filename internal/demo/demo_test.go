package demo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// TestMain stops the Google Pub/Sub emulator that the --emulator tests
// start (gcptest.Shared) after the tests.
func TestMain(m *testing.M) { os.Exit(gcptest.Main(m)) }

// projects numbers the projects the --emulator tests take on the shared
// emulator, so that parallel runs never see each other's messages.
var projects atomic.Int64

// TestDemo_StoryEndsWithRoutedCopies_R4_R28 runs the whole story in both
// consumers and both pump variants: two acks, the poison order presents
// counts 0, 1, 2 and is dead-lettered on its third delivery (R-1, R-2,
// R-4), the routed copies carry the five metadata keys and their stamped
// count, the malformed order goes to the invalid topic,
// the native policy never fires.
func TestDemo_StoryEndsWithRoutedCopies_R4_R28(t *testing.T) {
	testStory(t, func(t *testing.T) Options { return Options{} }, "Started the Pub/Sub emulator at 127.0.0.1:")
}

// TestDemo_GoogleEmulator_R4_R28 tells the same story on Google's own
// Pub/Sub emulator, as `brighter demo --emulator HOST:PORT` does,
// each run in a project of its own on the shared emulator.
func TestDemo_GoogleEmulator_R4_R28(t *testing.T) {
	emu, err := gcptest.Shared()
	if err != nil {
		t.Fatalf("Google's Pub/Sub emulator: %v", err)
	}
	testStory(t, func(t *testing.T) Options {
		return Options{Emulator: emu.Addr, Project: fmt.Sprintf("demo-%d", projects.Add(1))}
	}, "Using the Pub/Sub emulator at "+emu.Addr+", project demo-")
}

// testStory runs the story in both consumers and both pump variants with
// the options base gives, and checks the summary and the narration, whose
// first lines must contain started.
func testStory(t *testing.T, base func(t *testing.T) Options, started string) {
	for _, mode := range []string{"stream", "pull"} {
		for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
			t.Run(mode+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				var out bytes.Buffer
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				o := base(t)
				o.Out, o.Mode, o.Variant, o.Timeout = &out, mode, v, 45*time.Second
				d, err := Start(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(out.String(), started) {
					t.Errorf("narration does not start with %q:\n%s", started, out.String())
				}
				defer d.Close()
				sum, err := d.Run(ctx)
				if err != nil {
					t.Fatalf("run: %v\n%s", err, out.String())
				}
				got := slices.Clone(sum.Acknowledged)
				slices.Sort(got)
				if !slices.Equal(got, []string{GoodID1, GoodID2}) {
					t.Errorf("acknowledged %v", sum.Acknowledged)
				}
				if !slices.Equal(sum.PoisonDeliveries, []int{0, 1, 2}) {
					t.Errorf("poison counts %v, want [0 1 2]", sum.PoisonDeliveries)
				}
				if r, _ := sum.DeadLettered.Header.Bag.String(message.KeyRejectionReason); r != "DeliveryError" {
					t.Errorf("dead-letter reason %q", r)
				}
				if sum.DeadLettered.Header.HandledCount != RequeueCount {
					t.Errorf("dead-letter copy presents %d, want the stamped %d", sum.DeadLettered.Header.HandledCount, RequeueCount)
				}
				if r, _ := sum.Invalid.Header.Bag.String(message.KeyRejectionReason); r != "Unacceptable" {
					t.Errorf("invalid reason %q", r)
				}
				if !sum.NativeEmpty {
					t.Errorf("the native dead-letter subscription is not empty")
				}
				for _, want := range []string{
					"delivery 3 of " + PoisonID + ": delivery count 2 (Pub/Sub delivery_attempt 3)",
					"the budget fires on delivery 3",
					`published to "orders-dlq"`,
					"rejectionReason:     DeliveryError",
					"rejectionReason:     Unacceptable",
				} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("narration lacks %q:\n%s", want, out.String())
					}
				}
				if strings.Contains(out.String(), "\x1b[") {
					t.Errorf("colour escapes without Color")
				}
			})
		}
	}
}

// TestDemo_ColorAndSubscriptionsFile checks the colour switch and that the
// file for --keep-running names the emulator's address.
func TestDemo_ColorAndSubscriptionsFile(t *testing.T) {
	var out bytes.Buffer
	d, err := Start(context.Background(), Options{Out: &out, Color: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !strings.Contains(out.String(), "\x1b[1m") {
		t.Errorf("no colour with Color set:\n%q", out.String())
	}
	f := string(d.SubscriptionsFile())
	if !strings.Contains(f, "emulatorHost: "+d.EmulatorHost()) || !strings.Contains(f, "requeueCount: 3") {
		t.Errorf("subscriptions file:\n%s", f)
	}
}

// TestDemo_BadOptions: a bad mode and an address in use are errors, never a
// panic.
func TestDemo_BadOptions(t *testing.T) {
	if _, err := Start(context.Background(), Options{Mode: "push"}); err == nil || !strings.Contains(err.Error(), "valid values") {
		t.Errorf("mode push: %v", err)
	}
	d, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := Start(context.Background(), Options{Listen: d.EmulatorHost()}); err == nil {
		t.Errorf("a second emulator on %s started", d.EmulatorHost())
	}
}

package consume_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/tui"
)

// listenAddr waits for the listener's log line and returns its address.
func listenAddr(t *testing.T, logs *cmdtest.LockedBuffer) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if addr := cmdtest.ListenedAddr(logs.String()); addr != "" {
			return addr
		}
		time.Sleep(5 * time.Millisecond) // poll interval
	}
	t.Fatalf("no %q log line:\n%s", observe.LogListening, logs.String())
	return ""
}

// End to end: `consume --listen` with a deferring builtin handler
// and requeueCount 3, on the memory transport and on SQS (fauxqs); the
// dashboard model, fed from /events and /metrics exactly as `brighter
// watch` feeds it, shows the delivery count rising to the budget and the
// DeliveryError rejection to the dead-letter route, and /metrics reports the
// DLQ depth.
func TestConsumeListen_WatchShowsCountRisingToBudget_R4(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		dir := t.TempDir()
		seed := filepath.Join(dir, "in.jsonl")
		listenMust(t, os.WriteFile(seed, []byte(`{"id":"poison-1","topic":"orders","messageType":"MT_COMMAND","body":"{\"poison\":true}"}`+"\n"), 0o644))
		watchDrill(t, "poison-1", "orders-dlq", fmt.Sprintf(`subscriptions:
  - name: orders
    transport: memory
    messagePumpType: reactor
    requeueCount: 3
    requeueDelay: 20ms
    emptyChannelDelay: 10ms
    deadLetterRoutingKey: orders-dlq
    handler: {type: builtin, name: defer}
    memory:
      seed: %s
`, seed))
	})
	t.Run("sqs", func(t *testing.T) {
		emu := cmdtest.SharedSQS(t)
		t.Setenv("AWS_ENDPOINT_URL", emu.Endpoint)
		t.Setenv("AWS_REGION", sqstest.Region)
		t.Setenv("AWS_ACCESS_KEY_ID", "test")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
		run := fmt.Sprintf("w%d", time.Now().UnixNano()%1e9)
		id := "poison-" + run
		cfg := fmt.Sprintf(`subscriptions:
  - name: orders
    transport: sqs
    channelName: orders-%[1]s
    messagePumpType: proactor
    timeOut: 1s
    requeueCount: 3
    emptyChannelDelay: 10ms
    deadLetterRoutingKey: orders-dlq-%[1]s
    handler: {type: builtin, name: defer}
`, run)
		// The queue exists before consume starts: send creates it.
		path := filepath.Join(t.TempDir(), "send.yaml")
		listenMust(t, os.WriteFile(path, []byte(cfg), 0o644))
		io := &IOStreams{In: strings.NewReader(""), Out: &cmdtest.LockedBuffer{}, ErrOut: &cmdtest.LockedBuffer{}, Getenv: os.LookupEnv}
		if code := run0(io, "send", "--config", path, "--subscription", "orders", "--id", id, "--body", `{"poison":true}`); code != cmdutil.ExitOK {
			t.Fatalf("send exited %d: %s", code, io.ErrOut)
		}
		watchDrill(t, id, "orders-dlq-"+run, cfg)
	})
}

func run0(io *IOStreams, args ...string) int { return run(context.Background(), io, args) }

// watchDrill runs consume --listen over cfg and watches message id run down
// its budget of 3 into dlq.
func watchDrill(t *testing.T, id, dlq, config string) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "brighter.yaml")
	listenMust(t, os.WriteFile(cfg, []byte(config), 0o644))

	logs := &cmdtest.LockedBuffer{}
	io := &IOStreams{In: strings.NewReader(""), Out: &cmdtest.LockedBuffer{}, ErrOut: logs, Getenv: os.LookupEnv}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, io, []string{"consume", "--config", cfg, "--listen", "127.0.0.1:0", "--log-format", "json"})
	}()
	base := "http://" + listenAddr(t, logs)

	// Ready once the channel is open.
	listenWaitUntil(t, "ready", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	// The watch side: the same Watch, Batcher and Model as `brighter watch`.
	msgs := make(chan tea.Msg, 1024)
	send := func(m tea.Msg) { msgs <- m }
	b := tui.NewBatcher(20*time.Millisecond, 0)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	go b.Run(wctx, send)
	go tui.Watch(wctx, http.DefaultClient, base, b, send)

	var model tea.Model = tui.New(tui.Options{Targets: []string{base}, NoColor: true, Tick: -1})
	var counts []int
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-msgs:
			if em, ok := m.(tui.EventsMsg); ok {
				for _, r := range em.Records {
					if r.MessageID == id && (r.Kind == "received" || r.Kind == "deferred" || r.Kind == "rejected") {
						counts = append(counts, r.DeliveryCount)
					}
				}
			}
			model, _ = model.Update(m)
		case <-deadline:
			t.Fatalf("dashboard never showed the rejection; counts %v; screen:\n%s", counts, ansi.Strip(model.(tui.Model).Render()))
		}
		screen := ansi.Strip(model.(tui.Model).Render())
		if strings.Contains(screen, "DeliveryError") && strings.Contains(screen, "1/1 targets connected") {
			for _, want := range []string{id[:min(len(id), 20)], "██████████ 3/3", "rejected", "dead-letter", dlq[:min(len(dlq), 12)]} {
				if !strings.Contains(screen, want) {
					t.Fatalf("screen lacks %q:\n%s", want, screen)
				}
			}
			break
		}
	}
	// The count climbed one step per delivery to the budget:
	// received 0, deferred 1, received 1, deferred 2, received 2, rejected 3.
	if got, want := fmt.Sprint(counts), "[0 1 1 2 2 3]"; got != want {
		t.Fatalf("%s delivery counts seen = %s, want %s", id, got, want)
	}

	// /metrics agrees, and the DLQ depth is reported from the memory broker.
	listenWaitUntil(t, "dlq depth 1 in /metrics", func() bool {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		totals, err := observe.ParseTotals(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		o := totals["orders"]
		if o.Received > 3 {
			t.Fatalf("received %v times, want 3", o.Received)
		}
		return o.Received == 3 && o.Deferred == 2 && o.Rejected == 1 && o.BudgetExhausted == 1 && o.HasDLQDepth && o.DLQDepth == 1
	})

	cancel()
	select {
	case code := <-exit:
		if code != cmdutil.ExitOK {
			t.Fatalf("consume exited %d; logs:\n%s", code, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("consume did not stop")
	}
}

func TestConsumeListen_BadAddressIsUsageError(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "brighter.yaml")
	listenMust(t, os.WriteFile(cfg, []byte("subscriptions:\n  - name: a\n    transport: memory\n    handler: {type: builtin, name: ack}\n"), 0o644))
	errOut := &cmdtest.LockedBuffer{}
	io := &IOStreams{In: strings.NewReader(""), Out: &cmdtest.LockedBuffer{}, ErrOut: errOut, Getenv: func(string) (string, bool) { return "", false }}
	if code := run(context.Background(), io, []string{"consume", "--config", cfg, "--listen", "nope"}); code != cmdutil.ExitUsage {
		t.Fatalf("exit %d, want %d: %s", code, cmdutil.ExitUsage, errOut.String())
	}
	if !strings.Contains(errOut.String(), "--listen") {
		t.Fatalf("error does not name --listen: %s", errOut.String())
	}
}

func listenMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func listenWaitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package consume_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/consume"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/charmbracelet/x/ansi"
)

// closedPort returns a 127.0.0.1 port nothing listens on: every connection
// to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	return cmdtest.FreeAddr(t)
}

// `consume --tui` with the broker down. The dashboard (drawn on
// a stdout that says it is a terminal) shows the subscription failing
// since when with the last error, and the Error log lines in its log
// panel; stderr, not a terminal here, still gets every line. After q it
// says "draining (0 in flight)..." and the consumer exits 0.
func TestConsumeTUI_BrokerDown_StatusLogPanelAndDraining(t *testing.T) {
	cfg := brokerDownConfig(t)
	r := startTUIRun(t, cfg, false)
	// The renderer writes only what changed, so each phrase is looked for
	// on its own.
	r.waitFor(t, "the failing status, its last error and the log panel", func(s string) bool {
		return strings.Contains(s, "failing since") && strings.Contains(s, "last error:") && strings.Contains(s, "connection refused") &&
			strings.Contains(s, "ERROR orders: channel failure; backing off")
	})
	if !strings.Contains(r.logs.String(), "channel failure; backing off") {
		t.Errorf("stderr is not a terminal: the log lines must still reach it; got:\n%s", r.logs.String())
	}

	if _, err := r.typed.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "draining", func(s string) bool { return strings.Contains(s, "draining (0 in flight)...") })
	select {
	case code := <-r.exit:
		if code != cmdutil.ExitOK {
			t.Fatalf("consume exited %d after q, want 0; logs:\n%s", code, r.logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("consume did not exit after q; screen:\n%s", ansi.Strip(r.screen.String()))
	}
	if !strings.Contains(r.logs.String(), consume.LogConsumeQuitKey) {
		t.Errorf("stderr lacks %q:\n%s", consume.LogConsumeQuitKey, r.logs.String())
	}
}

// `consume --tui` with the broker down: its Error log line is cut to the
// width in the LOG panel; tab twice focuses the panel and enter opens the
// line whole, each attribute on a line of its own (the error, the count
// of failures), not "nothing selected".
func TestConsumeTUI_LogLineOpensWhole(t *testing.T) {
	cfg := brokerDownConfig(t)
	r := startTUIRun(t, cfg, false)
	r.waitFor(t, "the Error line in the LOG panel", func(s string) bool {
		return strings.Contains(s, "ERROR orders: channel failure; backing off")
	})
	if _, err := r.typed.Write([]byte("\t\t\r")); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "the log line opened whole", func(s string) bool {
		return strings.Contains(s, "DETAILS · log line") && strings.Contains(s, "channel failure; backing off") &&
			regexp.MustCompile(`failures +[0-9]+`).MatchString(s)
	})
	if s := ansi.Strip(r.screen.String()); strings.Contains(s, "nothing selected") {
		t.Errorf("enter on the LOG panel said nothing selected:\n%s", s)
	}
	if _, err := r.typed.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-r.exit:
		if code != cmdutil.ExitOK {
			t.Fatalf("consume exited %d after q, want 0; logs:\n%s", code, r.logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("consume did not exit after q")
	}
}

// tuiRun is `consume --tui` run in process with a terminal-like stdout:
// what it drew, what it logged, the keys it reads, and its exit code.
type tuiRun struct {
	screen, logs *cmdtest.LockedBuffer
	typed        *io.PipeWriter
	exit         chan int
}

// startTUIRun runs `consume --config cfg --tui`; with oneStream the
// screen and stderr are one buffer, in the order written, as on a
// terminal.
func startTUIRun(t *testing.T, cfg string, oneStream bool) *tuiRun {
	t.Helper()
	keys, typed := io.Pipe()
	t.Cleanup(func() { typed.Close() })
	r := &tuiRun{screen: &cmdtest.LockedBuffer{}, logs: &cmdtest.LockedBuffer{}, typed: typed, exit: make(chan int, 1)}
	if oneStream {
		r.logs = r.screen
	}
	streams := &IOStreams{In: keys, Out: r.screen, ErrOut: r.logs, OutTTY: true, Getenv: os.LookupEnv}
	go func() { r.exit <- run(context.Background(), streams, []string{"consume", "--config", cfg, "--tui"}) }()
	return r
}

// waitFor waits up to 30s for the screen to show what ok looks for,
// failing the test at once when consume exits first.
func (r *tuiRun) waitFor(t *testing.T, what string, ok func(string) bool) {
	t.Helper()
	polltest.UntilMsg(t, 30*time.Second, func() string {
		return "the dashboard to show " + what + "; screen:\n" + ansi.Strip(r.screen.String()) + "\nlogs:\n" + r.logs.String()
	}, func() bool {
		if ok(ansi.Strip(r.screen.String())) {
			return true
		}
		select {
		case code := <-r.exit:
			t.Fatalf("consume exited %d before the dashboard showed %s; screen and logs:\n%s\n%s", code, what, ansi.Strip(r.screen.String()), r.logs.String())
		default:
		}
		return false
	})
}

// seconds matches a count of seconds as the connecting line writes it.
var seconds = regexp.MustCompile(`[0-9]+s`)

// `consume --tui` on a broker that accepts connections and never answers:
// the dashboard is drawn while it connects, saying which subscription it
// opens, on which transport and endpoint, and for how long (the count
// moves), not a blank screen; q gives the connection up, the screen says
// so, and the consumer exits 0 saying it was interrupted while
// connecting.
func TestConsumeTUI_ConnectingShowsWhereAndForHowLong(t *testing.T) {
	b, cfg := cmdtest.SilentSQSConfig(t, nil, []string{"orders"})
	r := startTUIRun(t, cfg, false)
	r.waitFor(t, "what it connects to", func(s string) bool {
		return strings.Contains(s, "connecting to the broker for ") && strings.Contains(s, ": subscription orders...") &&
			strings.Contains(s, "sqs at "+b.URL) && strings.Contains(s, "give up the connection")
	})
	// The renderer writes only the cells that changed: a later count is
	// a bare "1s" after the line's first (nothing else on this screen
	// counts seconds).
	r.waitFor(t, "the time connecting moving", func(s string) bool {
		i := strings.Index(s, "connecting to the broker for ")
		return i >= 0 && len(seconds.FindAllString(s[i:], -1)) >= 2
	})
	if _, err := r.typed.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "stopping", func(s string) bool {
		return strings.Contains(s, "stopping: giving up the connection (subscription orders)")
	})
	select {
	case code := <-r.exit:
		if code != cmdutil.ExitOK {
			t.Fatalf("consume exited %d after q while connecting, want 0; logs:\n%s", code, r.logs.String())
		}
	case <-time.After(connectStopBound):
		t.Fatalf("consume did not exit within %s of q while connecting; logs:\n%s", connectStopBound, r.logs.String())
	}
	for _, want := range []string{consume.LogConsumeConnectQuit, "brighter: interrupted while connecting to the broker (subscription orders)"} {
		if !strings.Contains(r.logs.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.logs.String())
		}
	}
}

// `consume --tui` with a file mixing a subscription whose channel opens
// at once (memory) with two on a broker that accepts connections and
// never answers: while the second connects, its row says connecting, the
// third's that it waits for it, and only the first's connected (each
// phrase is looked for on its own: the renderer writes only what
// changed). q then ends the run (what the rows say after q is the model
// test's: the stop may end the dashboard before its next frame).
func TestConsumeTUI_ConnectingRowsSayWhichChannelIsOpen(t *testing.T) {
	_, cfg := cmdtest.SilentSQSConfig(t, []string{"a-memory"}, []string{"b-silent", "c-later"})
	r := startTUIRun(t, cfg, false)
	r.waitFor(t, "the rows' states while b-silent connects", func(s string) bool {
		return strings.Contains(s, "subscription b-silent (2 of 3)...") && strings.Contains(s, "✓ connected") &&
			strings.Contains(s, "… connecting (for ") && strings.Contains(s, "· waiting to connect (after subscription b-silent)")
	})
	if s := ansi.Strip(r.screen.String()); strings.Count(s, "✓ connected") != 1 {
		t.Errorf("while b-silent connects, %d rows were drawn connected, want 1 (a-memory):\n%s", strings.Count(s, "✓ connected"), s)
	}
	if _, err := r.typed.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-r.exit:
		if code != cmdutil.ExitOK {
			t.Fatalf("consume exited %d after q while connecting, want 0; logs:\n%s", code, r.logs.String())
		}
	case <-time.After(connectStopBound):
		t.Fatalf("consume did not exit within %s of q while connecting; logs:\n%s", connectStopBound, r.logs.String())
	}
}

// `consume --tui` whose start-up fails (the broker refuses connections and
// makeChannels validate must ask it): the dashboard shows the connection
// while it is tried, then gives the terminal back before the error, so
// the error is the last thing on the screen (stdout and stderr on one
// terminal here), and the exit is 1.
func TestConsumeTUI_StartupFailureLeavesTheErrorOnTheTerminal(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	addr := closedPort(t)
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	listenMust(t, os.WriteFile(cfg, []byte(`connections:
  aws:
    region: us-east-1
    endpoint: http://`+addr+`
subscriptions:
  - name: orders
    transport: sqs
    makeChannels: validate
    handler: {type: builtin, name: ack}
`), 0o644))
	r := startTUIRun(t, cfg, true)
	var code int
	select {
	case code = <-r.exit:
	case <-time.After(60 * time.Second):
		t.Fatalf("consume did not exit on a broker that refuses connections; screen:\n%s", ansi.Strip(r.screen.String()))
	}
	out := r.screen.String()
	if code != cmdutil.ExitFailure {
		t.Fatalf("consume exited %d, want %d:\n%s", code, cmdutil.ExitFailure, ansi.Strip(out))
	}
	if s := ansi.Strip(out); !strings.Contains(s, "connecting to the broker for ") || !strings.Contains(s, "sqs at http://"+addr) {
		t.Errorf("the dashboard never said what it connected to:\n%s", s)
	}
	// The alternate screen is left (the terminal given back) before the
	// error line is written.
	const leaveAltScreen = "\x1b[?1049l"
	i := strings.LastIndex(out, leaveAltScreen)
	if i < 0 {
		t.Fatalf("the dashboard never left the alternate screen:\n%q", out)
	}
	if after := out[i:]; !strings.Contains(after, "brighter: subscription orders: open channel: ") || !strings.Contains(after, "connection refused") {
		t.Errorf("the error is not on the terminal after the dashboard; after it:\n%s", after)
	}
}

// brokerDownConfig writes a subscriptions file of one SQS subscription,
// orders, whose endpoint is a closed port (every call is refused at once),
// with failure delays of 20-100 ms, and sets static test credentials. It
// returns the file's path.
func brokerDownConfig(t *testing.T) string {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_SESSION_TOKEN", "")
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	listenMust(t, os.WriteFile(cfg, []byte(`connections:
  aws:
    region: us-east-1
    endpoint: http://`+closedPort(t)+`
subscriptions:
  - name: orders
    transport: sqs
    channelName: orders
    makeChannels: assume
    channelFailureDelay: 20ms
    maxChannelFailureDelay: 100ms
    handler: {type: builtin, name: ack}
`), 0o644))
	return cfg
}

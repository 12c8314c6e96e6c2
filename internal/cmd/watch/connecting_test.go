package watch_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest/cmdmain"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/polltest"
)

// `brighter watch` on a `consume --listen` that is still opening its
// channels, in process: one subscription whose channel opens at once
// (memory) and two on an SQS endpoint that accepts connections and never
// answers. While the second connects, watch's rows say so: the first
// connected, the second connecting, the third waiting for it (each phrase
// is looked for on its own: the renderer writes only what changed), not
// every row connected. q then quits watch (exit 0).
func TestWatch_ConsumerStillConnectingShowsEachRowsState(t *testing.T) {
	_, cfg := cmdtest.SilentSQSConfig(t, []string{"a-memory"}, []string{"b-silent", "c-later"})
	ctx, cancel := context.WithCancel(context.Background())
	consumeLogs := &cmdtest.LockedBuffer{}
	consumed := make(chan int, 1)
	go func() {
		consumed <- cmdmain.Run(ctx, &iostreams.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: consumeLogs, Getenv: os.LookupEnv},
			[]string{"consume", "--config", cfg, "--listen", "127.0.0.1:0"})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-consumed:
		case <-time.After(30 * time.Second):
			t.Errorf("consume did not end within 30s of its context; stderr:\n%s", consumeLogs.String())
		}
	})
	var addr string
	polltest.UntilMsg(t, 30*time.Second, func() string { return "consume to listen; stderr:\n" + consumeLogs.String() }, func() bool {
		addr = cmdtest.ListenedAddr(consumeLogs.String())
		return addr != ""
	})

	keys, typed := io.Pipe()
	t.Cleanup(func() { typed.Close() })
	screen := &cmdtest.LockedBuffer{}
	watched := make(chan int, 1)
	go func() {
		watched <- cmdmain.Run(ctx, &iostreams.IOStreams{In: keys, Out: screen, ErrOut: io.Discard, OutTTY: true, Getenv: os.LookupEnv},
			[]string{"watch", "-t", "http://" + addr})
	}()
	var s string
	polltest.UntilMsg(t, 30*time.Second, func() string {
		return "watch to show a-memory connected, b-silent connecting and c-later waiting; screen:\n" + s + "\nconsume's stderr:\n" + consumeLogs.String()
	}, func() bool {
		s = ansi.Strip(screen.String())
		return strings.Contains(s, "✓ connected") && strings.Contains(s, "… connecting (for ") &&
			strings.Contains(s, "· waiting to connect (after subscription b-silent)")
	})
	if n := strings.Count(s, "✓ connected"); n != 1 {
		t.Errorf("while b-silent connects, %d rows were drawn connected, want 1 (a-memory):\n%s", n, s)
	}
	if _, err := typed.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-watched:
		if code != cmdutil.ExitOK {
			t.Fatalf("watch exited %d after q, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not exit within 10s of q")
	}
}

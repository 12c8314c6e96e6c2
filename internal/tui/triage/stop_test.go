package triage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/message"
)

// floodActions is fakeActions whose Replay runs until its context ends,
// then reports flood more outcomes (the publishes that were in flight
// finishing) and says how it ended on ended.
type floodActions struct {
	fakeActions
	flood   int
	started chan struct{}
	ended   chan error
}

func (f *floodActions) Replay(ctx context.Context, ids []string, dry bool, p func(Outcome)) (Result, error) {
	close(f.started)
	<-ctx.Done()
	for i := range f.flood {
		p(Outcome{ID: fmt.Sprintf("m%d", i)})
	}
	f.ended <- ctx.Err()
	return Result{Done: f.flood}, ctx.Err()
}

// TestTriageStoppedActionEnds: an action running when the console ends
// is stopped and returns even though nobody reads its progress any more
// (more outcomes than the progress channel holds): ctrl+c stops it at once
// (its context ends), and so does the end of the console's context (a
// signal); a progress send never blocks the action once its context has
// ended.
func TestTriageStoppedActionEnds(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		// end ends the console while the replay runs: ctrl+c, or the
		// console's context cancelled (cancel)
		end func(m Model, cancel func()) Model
	}{
		{"ctrl+c", func(m Model, _ func()) Model {
			nm, cmd := m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
			if cmd == nil {
				t.Fatal("ctrl+c during a replay returned no command: the console does not quit")
			}
			if _, ok := cmd().(tea.QuitMsg); !ok {
				t.Fatal("ctrl+c during a replay does not quit the console")
			}
			return nm.(Model)
		}},
		{"context", func(m Model, cancel func()) Model { cancel(); return m }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &floodActions{fakeActions: fakeActions{msgs: []*message.Message{
				rejected("t1", "orders", "timeout", `{"a":1}`, now.Add(-time.Hour)),
			}}, flood: 300, started: make(chan struct{}), ended: make(chan error, 1)}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m, _ := replaying(t, ctx, f, now)
			<-f.started
			// The console ends; nobody reads the action's channel again
			// (running is never called).
			_ = c.end(m, cancel)
			select {
			case err := <-f.ended:
				if err == nil {
					t.Errorf("the replay ended without its context ending")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the replay still runs 10 s after the console ended: it was not stopped, or its progress blocked on a channel nobody reads")
			}
		})
	}
}

// TestTriageKeyBarNamesEveryAction: the key bar names every key of the
// help screen but the moves (and those another entry names: R, E,
// ctrl+c): x purge, A archived, n note and g group by among them, at 80
// columns (broken between entries over as many lines as it needs, none
// wider than the screen) and at 200.
func TestTriageKeyBarNamesEveryAction(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{rejected("t1", "orders", "timeout", `{}`, now)}}
	for _, w := range []int{80, 200} {
		m := New(context.Background(), f, func() time.Time { return now }).WithMessages(f.msgs)
		m = run(t, m, tea.WindowSizeMsg{Width: w, Height: 24})
		lines := strings.Split(ansi.Strip(m.Render()), "\n")
		if len(lines) > 24 {
			t.Errorf("%d columns: %d lines on a 24-line terminal", w, len(lines))
		}
		bar := ""
		for i := len(lines) - 1; i >= 0 && strings.Contains(lines[i], "?"); i-- {
			bar = lines[i]
			if i > 0 && strings.HasPrefix(lines[i-1], "enter ") {
				bar = lines[i-1] + " " + bar
			}
			break
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > w {
				t.Errorf("%d columns: a line of %d cells: %q", w, ansi.StringWidth(l), l)
			}
		}
		for _, want := range []string{"enter", "esc", "space select", "r/R replay", "e/E edit", "a archive", "x purge", "A archived", "n note", "d dry", "/ search", "s sort", "g group by", "^r read", "?", "q"} {
			if !strings.Contains(bar, want) {
				t.Errorf("%d columns: the key bar %q lacks %q", w, bar, want)
			}
		}
		for _, b := range m.keys.listed() {
			k := b.Help().Key
			if offBar[k] {
				continue
			}
			if kb := b.BarHelp().Key; !strings.Contains(bar, kb) {
				t.Errorf("%d columns: %s is in the help but not on the key bar %q", w, k, bar)
			}
		}
	}
}

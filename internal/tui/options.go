package tui

import (
	"time"
)

// Limits of what the model keeps.
const (
	// MaxMessages is how many messages the messages panel remembers; the
	// oldest settled ones are forgotten first.
	MaxMessages = 1000
	// MaxRejections is how many rejections the log keeps.
	MaxRejections = 200
	// MaxPending is how many records are held while paused; more are
	// counted as skipped.
	MaxPending = 50000
	// MaxLogs is how many Warn/Error log lines the model keeps;
	// DefaultLogLines how many the log panel shows.
	MaxLogs         = 100
	DefaultLogLines = 5
	// rateWindow is the window of the received/s rate, in seconds.
	rateWindow = 10
	// DefaultWidth and DefaultHeight are used until the terminal reports
	// its size.
	DefaultWidth, DefaultHeight = 80, 24
)

// Options configure a Model.
type Options struct {
	// Title is the first word of the header ("brighter watch").
	Title string
	// Targets are the consumers watched, shown in the header; empty for the
	// in-process dashboard.
	Targets []string
	// NoColor renders without colour (NO_COLOR, or stdout not a terminal).
	NoColor bool
	// Now is the clock (time.Now when nil); Location the zone of the times
	// shown (time.Local when nil).
	Now      func() time.Time
	Location *time.Location
	// Tick is the rate refresh interval (1s when 0; negative: none, for
	// tests).
	Tick time.Duration
	// Interrupt, when set, makes q (and ctrl+c) act like a signal to an
	// in-process consumer (consume --tui): the first asks it to
	// drain and the dashboard stays, showing "draining (N in flight)...",
	// until its caller ends the program; one while draining asks it to exit
	// at once. It is called on its own goroutine and must not block. Nil:
	// q quits the dashboard (brighter watch).
	Interrupt func()
	// LogLines is how many of the last Warn/Error log lines the log panel
	// shows (DefaultLogLines when 0).
	LogLines int
}

package cmdutil

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/brightergo/brighter/internal/redact"
)

// MsgRunFailed is the stable message of the final error record a JSON
// run ends with.
const MsgRunFailed = "brighter: run failed"

// WriteFinalError writes the error that ends a run to w (stderr), masked
// with red and cut at redact.MaxQuoted bytes (redact.Bound): the line
// "brighter: ERROR", or when jsonFormat one JSON record (level ERROR, msg
// MsgRunFailed, error, exit_code), so that every line of a JSON run
// parses (what a crash-looping pod shows). The root writes it for every
// failed run; a command that ends the process itself (consume's second
// signal) writes it before it exits.
func WriteFinalError(w io.Writer, red *redact.Redactor, jsonFormat bool, err error, code int) {
	text := redact.Bound(red.String(err.Error()))
	if jsonFormat {
		slog.New(slog.NewJSONHandler(w, nil)).Error(MsgRunFailed, "error", text, "exit_code", code)
		return
	}
	fmt.Fprintln(w, "brighter:", text)
}

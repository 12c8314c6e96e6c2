package shared

import (
	"io"
	"os"

	"github.com/brightergo/brighter/internal/inspect"
)

// StdoutPipe returns out, an archive's stdout, as an inspect.Pipe when it
// is a pipe or a socket (whose reader keeps nothing of what it does not
// read); nil for anything else (a regular file, kept by fsync; a writer
// that is not a file).
func StdoutPipe(out io.Writer) inspect.Pipe {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	switch {
	case st.Mode()&os.ModeNamedPipe != 0:
		return newFdPipe(f, false)
	case st.Mode()&os.ModeSocket != 0:
		return newFdPipe(f, true)
	}
	return nil
}

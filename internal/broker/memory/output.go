package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckOutput reports why a dump (Broker.Dump) could not be written to
// path, the memory transport's memory.output, or nil when it could: an
// existing path must be a file that may be written; a new one needs an
// existing directory in which a file may be created (checked by creating
// and removing an empty temporary file there). It leaves path as it finds
// it. Its errors do not repeat path (a caller quotes it): "its directory
// /x does not exist", "is a directory, not a
// file", the open's or the create's cause ("permission denied").
func CheckOutput(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return errors.New("is a directory, not a file")
	case err == nil:
		fh, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot be written: %w", pathless(err))
		}
		return fh.Close()
	}
	// Not there, or not reachable: its directory says why.
	statErr := err
	dir := filepath.Dir(path)
	dst, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("its directory %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("its directory %s: %w", dir, pathless(err))
	case !dst.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case !errors.Is(statErr, fs.ErrNotExist):
		return pathless(statErr)
	}
	fh, err := os.CreateTemp(dir, ".brighter-output-check-*")
	if err != nil {
		return fmt.Errorf("no file can be created in %s: %w", dir, pathless(err))
	}
	return errors.Join(fh.Close(), os.Remove(fh.Name()))
}

// pathless is err without the path an fs.PathError names.
func pathless(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

package shared

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/spf13/cobra"
)

// AddRunOutput declares archive's, purge's and restore's --output into
// format.
func AddRunOutput(cmd *cobra.Command, format *string) {
	cmdutil.AddOutputFlag(cmd, format, cmdutil.RunFormats, "(json: a record per message, then a summary, on stdout)")
}

// Selects reports whether a flag narrows the selection.
func (o *Options) Selects() bool {
	return len(o.Reasons) > 0 || len(o.Topics) > 0 || o.Since != "" || o.Until != "" || len(o.IDs) > 0 ||
		o.Grep != "" || len(o.GroupIDs) > 0 || o.Limit > 0
}

// Fsyncer returns the sync of an archive written to f: fsync, where f is
// something that can be synced (a pipe or a terminal cannot: EINVAL).
func Fsyncer(f interface{ Sync() error }) func() error {
	return func() error {
		err := f.Sync()
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
			return nil
		}
		return err
	}
}

// LogArchiveUnfinishedLineCut is logged (Warn) when dlq archive cut an
// unfinished last line off the file it appends to.
const LogArchiveUnfinishedLineCut = "archive: cut an unfinished last line off the file"

// ArchiveFile is an existing --file, checked (inspect.CheckArchive) before
// anything is read: nil file when there is none yet.
type ArchiveFile struct {
	file *os.File
	// keep and unfinished: cut the file to keep before appending.
	keep       int64
	unfinished bool
}

// CheckArchiveFile opens an existing archive path for reading and appending
// and checks that every line is a record: a file that is not an
// archive is a usage error naming its first bad line, and is not changed.
// A missing file is no error (it is created once the source is open),
// but a missing directory to create it in is a usage error naming that
// directory; pipes and devices are not checked.
func CheckArchiveFile(path string) (ArchiveFile, error) {
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		dir := filepath.Dir(path)
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return ArchiveFile{}, cmdutil.UsageErr(fmt.Errorf("archive --file %s: the directory %s does not exist (create it first); nothing was read", path, dir))
		}
		return ArchiveFile{}, nil
	}
	if err != nil {
		return ArchiveFile{}, cmdutil.FailureErr(fmt.Errorf("archive --file: %w", err))
	}
	st, err := fh.Stat()
	if err != nil {
		_ = fh.Close()
		return ArchiveFile{}, cmdutil.FailureErr(fmt.Errorf("archive --file: %w", err))
	}
	if !st.Mode().IsRegular() {
		return ArchiveFile{file: fh}, nil
	}
	keep, unfinished, err := inspect.CheckArchive(io.NewSectionReader(fh, 0, st.Size()), path)
	if err != nil {
		_ = fh.Close()
		if errors.Is(err, inspect.ErrNotArchive) {
			return ArchiveFile{}, cmdutil.UsageErr(fmt.Errorf("archive --file: %w; refusing to append to it: nothing was read and the file is unchanged", err))
		}
		return ArchiveFile{}, cmdutil.FailureErr(fmt.Errorf("archive --file: %w", err))
	}
	return ArchiveFile{file: fh, keep: keep, unfinished: unfinished}, nil
}

// Open makes the checked file ready to append to: it cuts an unfinished
// last line off an existing archive (a Warn on logger says how many bytes)
// or creates a missing one with mode 0600.
func (a ArchiveFile) Open(path string, logger *slog.Logger) (*os.File, error) {
	if a.file == nil {
		fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("archive --file: %w", err)
		}
		return fh, nil
	}
	if a.unfinished {
		st, err := a.file.Stat()
		if err == nil {
			err = a.file.Truncate(a.keep)
		}
		if err != nil {
			_ = a.file.Close()
			return nil, fmt.Errorf("archive --file %s: cut the unfinished last line: %w", path, err)
		}
		logger.Warn(LogArchiveUnfinishedLineCut, "file", path, "bytes", st.Size()-a.keep)
	}
	return a.file, nil
}

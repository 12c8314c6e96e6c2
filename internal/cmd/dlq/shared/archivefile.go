package shared

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// CheckArchiveFile checks the archive path before anything is read: it must
// name a regular file, existing or new, since archive removes each message
// once it is written there. What path resolves to (symbolic links
// followed, os.Stat) is checked, and an existing file is then opened for
// reading and appending and checked again on the opened file (f.Stat), so
// the check holds for the file written to even if the path is replaced in
// between. Each of these is a usage error naming path and saying what to
// give instead: an empty path; a directory; a character or block device
// (/dev/null, /dev/full, or a path resolving to one), a named pipe or a
// socket (what is written to them is not kept); a symbolic link to nothing;
// a missing directory to create the file in, or a path through a file. An
// existing file that is not an archive is a usage error naming its first
// bad line, and is not changed. A missing file is no error (Open creates
// it once the source is open).
func CheckArchiveFile(path string) (ArchiveFile, error) {
	if path == "" {
		return ArchiveFile{}, cmdutil.UsageErr(errors.New("archive --file is empty: give the path of an archive file (an existing archive, or a new file to create), or - for stdout; nothing was read"))
	}
	st, err := os.Stat(path)
	if err != nil {
		return ArchiveFile{}, missingArchiveFile(path, err)
	}
	if !keepsWrites(st.Mode()) {
		return ArchiveFile{}, notRegularArchiveFile(path, st.Mode())
	}
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return ArchiveFile{}, cmdutil.FailureErr(fmt.Errorf("archive --file: %w", err))
	}
	if st, err = fh.Stat(); err != nil {
		_ = fh.Close()
		return ArchiveFile{}, cmdutil.FailureErr(fmt.Errorf("archive --file: %w", err))
	}
	if !keepsWrites(st.Mode()) {
		_ = fh.Close()
		return ArchiveFile{}, notRegularArchiveFile(path, st.Mode())
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

// keepsWrites reports whether a file of mode keeps what is written to it,
// so archive may remove a message once its line is there: only a regular
// file does (a device, a pipe or a socket does not; a directory cannot be
// written).
func keepsWrites(mode fs.FileMode) bool { return mode.IsRegular() }

// missingArchiveFile is CheckArchiveFile's answer when os.Stat(path)
// failed with err: nil when path is a new file in an existing directory,
// else the usage error for a symbolic link to nothing, a missing directory
// or a path through a file (a failure for anything else, such as a
// permission denied).
func missingArchiveFile(path string, err error) error {
	dir := filepath.Dir(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			return cmdutil.UsageErr(fmt.Errorf("archive --file %s is a symbolic link to %s, which does not exist: give the path of a regular file (an existing archive, or a new file to create); nothing was read", path, target))
		}
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return cmdutil.UsageErr(fmt.Errorf("archive --file %s: the directory %s does not exist (create it first); nothing was read", path, dir))
		} else if errors.Is(err, syscall.ENOTDIR) {
			return notADirectory(path, dir)
		}
		return nil
	case errors.Is(err, syscall.ENOTDIR):
		return notADirectory(path, dir)
	}
	return cmdutil.FailureErr(fmt.Errorf("archive --file: %w", err))
}

// notADirectory is the usage error for an archive path through something
// that is not a directory (--file afile/x.jsonl where afile is a file).
func notADirectory(path, dir string) error {
	return cmdutil.UsageErr(fmt.Errorf("archive --file %s: %s is not a directory (a part of it is a file): give a path in an existing directory; nothing was read", path, dir))
}

// notRegularArchiveFile is the usage error for an archive path that
// resolves to mode, which is not a regular file.
func notRegularArchiveFile(path string, mode fs.FileMode) error {
	name := path
	if real, err := filepath.EvalSymlinks(path); err == nil && real != filepath.Clean(path) {
		name = fmt.Sprintf("%s (%s)", path, real)
	}
	var kind string
	switch {
	case mode.IsDir():
		return cmdutil.UsageErr(fmt.Errorf("archive --file %s is a directory: give the path of a file in it (such as %s); nothing was read", name, filepath.Join(path, "archive.jsonl")))
	case mode&fs.ModeCharDevice != 0:
		kind = "a character device"
	case mode&fs.ModeDevice != 0:
		kind = "a block device"
	case mode&fs.ModeNamedPipe != 0:
		kind = "a pipe"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	default:
		kind = "not a regular file (" + mode.Type().String() + ")"
	}
	return cmdutil.UsageErr(fmt.Errorf("archive --file %s is %s, which does not keep what is written to it, and archive removes each message it writes: "+
		"give the path of a regular file (an existing archive, or a new file to create), or - for stdout; to delete messages without a copy use dlq purge --yes; nothing was read", name, kind))
}

// Open makes the checked file ready to append to: it cuts an unfinished
// last line off an existing archive (a Warn on logger says how many bytes)
// or creates a missing one with mode 0600.
func (a ArchiveFile) Open(path string, logger *slog.Logger) (*os.File, error) {
	if a.file == nil {
		// O_EXCL: the file made is a new regular file (a path created
		// since the check, even a symbolic link, fails here).
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

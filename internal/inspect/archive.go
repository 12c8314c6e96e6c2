package inspect

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"syscall"

	"github.com/google/uuid"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Stable log message texts of archive and restore (tests match them).
const (
	LogArchiveRemoveFailed = "dlq message archived but not removed; it is now in both places"
	LogArchiveWriteFailed  = "dlq messages could not be written to the archive; they stay in the dead-letter destination"
	LogArchiveReaderLeft   = "dlq messages left in the dead-letter destination: the archive's reader went away before it had read their records"
	LogRestoreFailed       = "dlq message restore failed; it is still in the archive file"
)

// ArchiveSummary is the end of an archive (or a purge).
type ArchiveSummary struct {
	// Archived is how many were written, synced and then removed.
	Archived int `json:"archived"`
	// Skipped is how many were read and not selected; they stay in place.
	Skipped int `json:"skipped"`
	// Failed is how many were written but could not be removed (each is in
	// both places) or could not be encoded (each stays in place).
	Failed int `json:"failed"`
	// Left, for an archive to a Pipe that stopped because the reader went
	// away (EPIPE), is how many were written to the pipe but not removed:
	// the reader had not read all of their receive's records, or was not
	// seen still reading after them. They stay in the dead-letter
	// destination, visible, and are logged once at Warn
	// (LogArchiveReaderLeft), not as failures: nothing failed but the
	// reader's interest. 0 otherwise.
	Left int `json:"left,omitempty"`
	// Unconfirmed, for an archive to a Pipe that stopped because the
	// reader went away, are the ids of the receive removed last: the
	// reader had read every byte of their records and was still there
	// when the next receive's went into the pipe, but a reader that stops
	// early (head -n) may have kept only some of them. Empty otherwise.
	Unconfirmed []string `json:"unconfirmed,omitempty"`
}

// Pipe is the reader at the other end of an archive written to a pipe (or
// a socket), which keeps nothing itself: ArchiveWith removes a receive's
// messages only once the reader has read every byte of their records
// (Drained) and is seen still there after that (a later receive's
// records went into the pipe, or Present at the end).
type Pipe interface {
	// Drained waits until the reader has read every byte written so far.
	// It returns an error wrapping EPIPE when the reader goes away first,
	// ctx's error when ctx ends first.
	Drained(ctx context.Context) error
	// Present returns an error wrapping EPIPE when the reader has gone.
	Present() error
}

// Archive scans the source and, for each message the filter selects,
// writes its record (message.MarshalRecordJSON: every header, the bag and
// the body, base64 when it is not UTF-8) as one line to w, and only after
// the lines of a receive have been written and sync has returned (an fsync
// of the file; nil when there is nothing to sync, as for a purge) removes
// those messages from the source. A message is therefore at
// every instant in the source, in the archive, or in both, never in
// neither: a crash between the sync and the remove leaves it in both, and
// a second archive appends it again. A failed write or sync stops the
// archive and leaves that receive's messages in place (some may already be
// in the file too); a failed remove leaves the message in both places, is
// counted in Failed and logged at Error with its id.
//
// When src.ShortPoll is set, the write, sync and remove of one receive (at
// most one at a time, in the order received, so the file keeps that order)
// run while the next receive, a short poll, is under way: an archive costs
// about the longer of the two per receive, not their sum. A receive that
// comes back empty while a remove is still under way proves nothing (an
// SQS FIFO group's next messages are held back until then): the archive
// waits for it and receives again, so the end is proved only by receives
// made after every remove (Scan's emptyReceives). Otherwise each receive is
// written, synced and removed before the next one.
//
// Messages not selected are released when the scan ends. It removes as it
// goes, so it reaches every message of an SQS FIFO group, as replay does.
// When ctx ends (an interrupt) the messages read but not yet written are
// released; what was written is removed first. It returns the summary and
// the first error of the scan, the write or the sync.
func Archive(ctx context.Context, src *Source, f Filter, w io.Writer, sync func() error) (ArchiveSummary, error) {
	return ArchiveWith(ctx, src, f, w, sync, nil, nil)
}

// ArchiveWith is Archive that also tells done (when not nil) about each
// selected message once its fate is known: err nil when it was written,
// synced and removed; else why not (`dlq archive -o json`). It is
// called from one goroutine at a time, in the order the messages were
// received (with src.ShortPoll, not the caller's).
//
// With pipe not nil, w is a pipe to a reader that keeps nothing of what
// it does not read, and a receive's messages are removed only when (1)
// their records were written and flushed, (2) the reader then read every
// byte of them (pipe.Drained; the next receive's records are written only
// after that), and (3) after that the reader is still there: the next
// receive's records went into the pipe, or, for the last receive,
// pipe.Present at the end. A reader that goes away (EPIPE) stops the
// archive: the receive whose records it had not all read, and the one
// held back for (3), are released, not removed; ArchiveSummary.Unconfirmed
// names the receive removed last, the only one whose records the reader
// may have read and not kept (a reader that stops within a receive never
// reads the next, so never lets it be removed). No rule can say what a
// reader keeps of what it reads: one that reads everything and keeps some
// (awk 'NR<=2') takes the rest out of the destination as /dev/null would.
func ArchiveWith(ctx context.Context, src *Source, f Filter, w io.Writer, sync func() error, pipe Pipe, done func(id string, err error)) (ArchiveSummary, error) {
	tell := func(m *message.Message, err error) {
		if done != nil {
			done(m.Header.MessageID, err)
		}
	}
	var (
		sum     ArchiveSummary
		bw      = bufio.NewWriter(w)
		pending []*message.Message
		log     = src.logger()
		// inflight is closed when the commit under way ends; nil when none
		// was started since the last wait. commitErr and commits are
		// written by that commit and read only after waiting for it.
		inflight  chan struct{}
		commitErr error
		commits   int
		settled   int
		// kept (with pipe): the receive written and read by the reader,
		// removed once a later write shows the reader still there.
		kept []*message.Message
	)
	// dctx: a wait for a pipe's reader ends with an interrupt (commit
	// itself runs on ctx without its cancellation).
	dctx := ctx
	holds := func(ms []*message.Message) []held {
		hs := make([]held, len(ms))
		for i, m := range ms {
			hs[i] = holdOf(m)
		}
		return hs
	}
	// remove acknowledges written (their records are in the archive) and
	// releases back and those it could not remove.
	remove := func(ctx context.Context, written, back []*message.Message) {
		aerr := acknowledgeAll(ctx, src.Consumer, written)
		for i, m := range written {
			if aerr[i] != nil {
				sum.Failed++
				log.ErrorContext(ctx, LogArchiveRemoveFailed, "message_id", m.Header.MessageID, "source", src.Name, "error", aerr[i])
				tell(m, fmt.Errorf("archived but not removed (it is now in both places): %w", aerr[i]))
				back = append(back, m)
				continue
			}
			sum.Archived++
			tell(m, nil)
		}
		release(ctx, src, holds(back))
	}
	// notWritten reports ms, whose records did not reach the archive for
	// err and which stay in the source: at Error with each id, or, when a
	// pipe's reader went away (EPIPE), as left (sum.Left), logged once at
	// Warn with their ids.
	notWritten := func(ctx context.Context, ms []*message.Message, err error) {
		if len(ms) == 0 {
			return
		}
		left := pipe != nil && errors.Is(err, syscall.EPIPE)
		ids := make([]string, 0, len(ms))
		for _, m := range ms {
			if !left {
				log.ErrorContext(ctx, LogArchiveWriteFailed, "message_id", m.Header.MessageID, "source", src.Name, "error", err)
			}
			ids = append(ids, m.Header.MessageID)
			tell(m, fmt.Errorf("write the archive: %w", err))
		}
		if left {
			sum.Left += len(ms)
			log.WarnContext(ctx, LogArchiveReaderLeft, "message_ids", ids, "source", src.Name)
		}
	}
	// removeKept removes the receive held back for a pipe's reader.
	removeKept := func(ctx context.Context) {
		if len(kept) == 0 {
			return
		}
		sum.Unconfirmed = sum.Unconfirmed[:0]
		for _, m := range kept {
			sum.Unconfirmed = append(sum.Unconfirmed, m.Header.MessageID)
		}
		remove(ctx, kept, nil)
		kept = nil
	}
	// unkeep releases the receive held back for a pipe's reader, which
	// went away (err) before it could be removed.
	unkeep := func(ctx context.Context, err error) []held {
		notWritten(ctx, kept, err)
		hs := holds(kept)
		kept = nil
		return hs
	}
	// commit writes batch, syncs, then removes it (with pipe: removes the
	// receive held back, and holds batch back once the reader read it).
	commit := func(ctx context.Context, batch []*message.Message) error {
		commits++
		written := batch[:0:0]
		var back []*message.Message
		for _, m := range batch {
			line, err := message.MarshalRecordJSON(m)
			if err == nil {
				_, err = bw.Write(append(line, '\n'))
				if err != nil && pipe != nil && errors.Is(err, syscall.EPIPE) {
					// The reader went away as the buffer filled: this
					// record and the rest go as the flush's below do.
					written = append(written, m)
					continue
				}
			}
			if err != nil {
				sum.Failed++
				log.ErrorContext(ctx, LogArchiveWriteFailed, "message_id", m.Header.MessageID, "source", src.Name, "error", err)
				tell(m, fmt.Errorf("write the archive: %w", err))
				back = append(back, m)
				continue
			}
			written = append(written, m)
		}
		err := bw.Flush()
		if err == nil && sync != nil {
			err = sync()
		}
		if err != nil {
			notWritten(ctx, written, err)
			release(ctx, src, append(holds(append(back, written...)), unkeep(ctx, err)...))
			return fmt.Errorf("write the archive: %w", err)
		}
		if pipe == nil {
			remove(ctx, written, back)
			return nil
		}
		// This receive's records went into the pipe after the reader had
		// read all of the one held back: that one goes.
		removeKept(ctx)
		if err := pipe.Drained(dctx); err != nil {
			notWritten(ctx, written, err)
			release(ctx, src, holds(append(back, written...)))
			return fmt.Errorf("write the archive: %w", err)
		}
		kept = written
		release(ctx, src, holds(back))
		return nil
	}
	// wait waits for the commit under way, if any, and returns the first
	// commit error.
	wait := func() error {
		if inflight != nil {
			<-inflight
			inflight = nil
		}
		return commitErr
	}
	// flush hands the pending messages to a commit: on this goroutine, or
	// with src.ShortPoll on its own while the scan receives again. A
	// commit that failed stops the archive; the pending messages are then
	// released by the caller.
	nctx := context.WithoutCancel(ctx)
	flush := func() error {
		if err := wait(); err != nil {
			return err
		}
		if len(pending) == 0 {
			return nil
		}
		batch := pending
		pending = nil
		if !src.ShortPoll {
			return commit(nctx, batch)
		}
		ch := make(chan struct{})
		inflight = ch
		go func() {
			defer close(ch)
			commitErr = commit(nctx, batch)
		}()
		return nil
	}
	h := hooks{batch: flush}
	if src.ShortPoll {
		// An empty receive made while a commit was under way: wait for it,
		// then receive again (a FIFO group it freed may have more).
		h.settle = func() bool {
			if wait() != nil {
				return false
			}
			again := commits != settled
			settled = commits
			return again
		}
		h.pollShort = func() bool { return inflight != nil }
	}
	counts, err := scan(ctx, src, f, func(ctx context.Context, m *message.Message) (bool, error) {
		// Archive owns the message from here: commit removes or releases it.
		pending = append(pending, m)
		return true, nil
	}, h)
	if werr := wait(); err == nil {
		err = werr
	}
	// The scan stopped inside a receive (limit, interrupt, error): what it
	// handed over is still pending.
	if err != nil || ctx.Err() != nil {
		release(nctx, src, holds(pending))
		pending = nil
	} else if len(pending) > 0 {
		err = commit(nctx, pending)
	}
	if len(kept) > 0 {
		// The last receive the reader read: removed if it is still there
		// (reading on to the end of the archive), else released.
		if perr := pipe.Present(); perr != nil {
			release(nctx, src, unkeep(nctx, perr))
			if err == nil {
				err = fmt.Errorf("write the archive: %w", perr)
			}
		} else {
			removeKept(nctx)
			sum.Unconfirmed = nil
		}
	}
	// The receive removed last is named while its reader is gone, whether
	// the run saw that in a write (EPIPE) or stopped first (an interrupt,
	// as the command's broken-pipe watch makes one).
	if pipe == nil || !errors.Is(err, syscall.EPIPE) && pipe.Present() == nil {
		sum.Unconfirmed = nil
	}
	sum.Skipped = counts.Skipped
	return sum, err
}

// ArchiveFile is f, the archive file at path, with the errors of its
// writes and fsyncs naming the file ("archive file PATH: fsync: ..."): what
// `dlq archive --file` hands to ArchiveWith, so that a failed write or
// fsync, which stops the archive with that receive's messages left in
// place, fails the command with the file named.
func ArchiveFile(path string, f SyncFile) SyncFile { return namedFile{f: f, path: path} }

type namedFile struct {
	f    SyncFile
	path string
}

func (n namedFile) Write(p []byte) (int, error) {
	k, err := n.f.Write(p)
	if err != nil {
		err = fmt.Errorf("archive file %s: %w", n.path, err)
	}
	return k, err
}

func (n namedFile) Sync() error {
	if err := n.f.Sync(); err != nil {
		return fmt.Errorf("archive file %s: fsync: %w", n.path, err)
	}
	return nil
}

// RestoreCopy returns the message to publish for a record read back from an
// archive: the same message (id, headers, bag with its rejection metadata,
// body) addressed to dest, without the SQS receipt handle the archive may
// have kept, without a delay, and with a fresh deduplication id when it has
// a partition key (a FIFO group), so SQS does not drop it as a re-send.
func RestoreCopy(m *message.Message, dest string) *message.Message {
	c := m.Clone()
	c.Receipt, c.DeliveryAttempt = nil, 0
	delete(c.Header.Bag, "ReceiptHandle")
	if c.Header.PartitionKey != "" {
		c.Header.Bag[KeyDeduplicationID] = uuid.NewString()
	}
	c.Header.Delay = 0
	c.Header.Topic = dest
	return c
}

// ReadArchive reads every record of an archive (JSON lines, as Archive and
// `dlq peek --output json` write them; blank lines are skipped). It returns
// an error naming the line of the first record that cannot be read, and
// then no messages: a restore publishes nothing from a damaged file.
func ReadArchive(r io.Reader, name string) ([]*message.Message, error) {
	var out []*message.Message
	err := archiveLines(r, name, func(l archiveLine) error {
		m, err := l.decode(name)
		if err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ErrNotArchive is returned (wrapped) by CheckArchive for a file that is
// not an archive of JSON-lines records.
var ErrNotArchive = errors.New("not an archive of dlq records")

// CheckArchive reads an existing file before Archive appends to it:
// every line that a newline ends must be blank or a record, decoded as
// ReadArchive decodes it, else it returns ErrNotArchive (wrapped, naming
// name and the line) and the file must not be touched. A last line without
// a newline is what a run killed while writing leaves (never synced, so its
// message was never removed): when it follows at least one record and
// starts with '{' it returns unfinished true and keep, the offset of that
// line, where the file should be cut before appending; otherwise such a
// line is ErrNotArchive too. A blank last line is kept. Errors reading r
// are returned wrapped.
func CheckArchive(r io.Reader, name string) (keep int64, unfinished bool, err error) {
	records := 0
	err = archiveLines(r, name, func(l archiveLine) error {
		if !l.finished {
			if records > 0 && l.text[0] == '{' {
				keep, unfinished = l.start, true
				return nil
			}
			return fmt.Errorf("%s:%d: %w: its last line has no newline and does not follow a record", name, l.n, ErrNotArchive)
		}
		if _, err := l.decode(name); err != nil {
			return fmt.Errorf("%w (%w)", err, ErrNotArchive)
		}
		records++
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return keep, unfinished, nil
}

// archiveLine is one non-blank line of an archive.
type archiveLine struct {
	// n is its number, from 1.
	n int
	// text is the line without its line end.
	text []byte
	// start is its offset in bytes from the start of the file.
	start int64
	// finished reports whether a newline ends it.
	finished bool
}

// decode reads the line as ReadArchive does: message.UnmarshalRecordJSON,
// an error naming name and the line number.
func (l archiveLine) decode(name string) (*message.Message, error) {
	m, err := message.UnmarshalRecordJSON(l.text)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, l.n, err)
	}
	return m, nil
}

// archiveLines calls fn with each non-blank line of r, in order, and stops
// at fn's first error; a line may be up to 64 MiB long.
func archiveLines(r io.Reader, name string, fn func(archiveLine) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	var (
		off, start int64
		finished   bool
	)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		advance, token, err := bufio.ScanLines(data, atEOF)
		if advance > 0 {
			start, off = off, off+int64(advance)
			finished = data[advance-1] == '\n'
		}
		return advance, token, err
	})
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(archiveLine{n: n, text: line, start: start, finished: finished}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}

// RestoreSummary is the end of a restore.
type RestoreSummary struct {
	// Restored is how many were published.
	Restored int `json:"restored"`
	// Failed is how many could not be published (each stays in the file
	// only).
	Failed int `json:"failed"`
}

// restoreInFlight is how many batches Restore publishes at once when no
// message has a partition key (one batch at a time, restore
// ran at 0.8 of a plain SDK loop's rate).
const restoreInFlight = 4

// Restore publishes each message to dest (RestoreCopy) with p, at most
// replayBatch at a time with a broker.BatchProducer, and tells done (when
// not nil) about each, in the order read, from the caller's goroutine: err
// nil when published. Failures are also logged at Error on logger with the
// message id. A failed publish does not stop it.
//
// When no message has a partition key (an SQS FIFO message group, a
// Pub/Sub ordering key, a RocketMQ message group), up to restoreInFlight
// batches are published at once: nothing orders such messages at the
// destination anyway. Otherwise one batch at a time, in the order read, so
// each group arrives in the archive's order.
//
// It starts no further batch once ctx ends, waits for the batches under
// way, and returns ctx's error; the archive file is never changed, so a
// restore run again publishes everything again (duplicates, never losses).
func Restore(ctx context.Context, p broker.Producer, ms []*message.Message, dest string, logger *slog.Logger, done func(id string, err error)) (RestoreSummary, error) {
	var sum RestoreSummary
	window := restoreInFlight
	if slices.ContainsFunc(ms, func(m *message.Message) bool { return m.Header.PartitionKey != "" }) {
		window = 1
	}
	type sent struct {
		copies []*message.Message
		errs   []error
	}
	var inFlight []chan sent
	report := func() {
		r := <-inFlight[0]
		inFlight = inFlight[1:]
		for i, c := range r.copies {
			if r.errs[i] != nil {
				sum.Failed++
				logger.ErrorContext(ctx, LogRestoreFailed, "message_id", c.Header.MessageID, "destination", dest, "error", r.errs[i])
			} else {
				sum.Restored++
			}
			if done != nil {
				done(c.Header.MessageID, r.errs[i])
			}
		}
	}
	var err error
	for start := 0; start < len(ms); start += replayBatch {
		if err = ctx.Err(); err != nil {
			break
		}
		end := min(start+replayBatch, len(ms))
		copies := make([]*message.Message, 0, end-start)
		for _, m := range ms[start:end] {
			copies = append(copies, RestoreCopy(m, dest))
		}
		ch := make(chan sent, 1)
		inFlight = append(inFlight, ch)
		go func() { ch <- sent{copies, sendAll(context.WithoutCancel(ctx), p, copies)} }()
		if len(inFlight) == window {
			report()
		}
	}
	for len(inFlight) > 0 {
		report()
	}
	return sum, err
}

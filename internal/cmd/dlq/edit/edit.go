package edit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

// dlq edit: edit one dead-lettered message and replay the
// edited copy through dlq replay's own run (shared.ReplayOptions.Run), so
// the destination, the allow-list and --to are replay's.

// Options are dlq edit's flags: replay's and its own.
type Options struct {
	*shared.ReplayOptions
	// id is the first argument: the message to edit.
	id string
	// headers is --headers: edit the headers and bag as YAML too.
	headers bool
	// bodyFile is --body-file: the new body from a file ("-": stdin).
	bodyFile string
	// sets are --set key=value: a header field or a bag entry.
	sets []string
}

// NewCmdEdit returns dlq edit. runF, when not nil, is called with the
// parsed options instead of runEdit (a test checks the flags' parsing
// without reading anything).
func NewCmdEdit(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{ReplayOptions: &shared.ReplayOptions{Options: shared.NewOptions(f)}}
	cmd := &cobra.Command{
		Use:   "edit ID [SUBSCRIPTION|URL]",
		Short: "Edit one dead-lettered message and replay the edited copy",
		Long: `Open the body of dead-lettered message ID in $EDITOR (vi when it is unset;
off a terminal, without $EDITOR, an edit that needs the editor is refused,
exit 2) and replay the edited copy where dlq replay would send it: --to, else its
originalTopic when the subscriptions file knows it for this dead-letter
destination (the same allow-list; --allow-any-destination lifts it).

--headers opens the headers and bag as YAML first (messageType,
correlationId, contentType, partitionKey, ..., bag); the id, topic,
timestamp and handled count are replay's (--new-id, --to, --keep-count).
--body-file F takes the body from F ("-": stdin) without an editor;
--set key=value (repeatable) sets a header field it names, else a bag
entry, after any editing: for scripts. It refuses (exit 2) the rejection
metadata, the replay's own bag keys, and id, topic, handledCount,
timestamp and delayMs (--new-id, --to, --keep-count set what can be).
The YAML of --headers is checked the same way: a key --set refuses, a
top-level key that is not a header field, or a value that is not a
string (one the bag did not already hold) is refused (exit 2, the key
named, nothing sent, the message left in place).

A body whose content type is JSON must parse: on a terminal the editor
is opened again (or the edit abandoned), otherwise the command exits 2
having sent nothing.

The edited copy records editedAt (RFC 3339) and originalBodySha256 (the
SHA-256, hex, of the dead-lettered body) in its bag, beside replay's
replayedFrom and replayedAt. The original is removed from the dead-letter
destination only after the edited copy was accepted: a failed publish, or
a crash at any instant, leaves it there (a crash after the publish leaves
it in both places). When the message's body changed between the edit and
the replay, nothing is sent (exit 1).

An id stored more than once (two subscriptions sharing the dead-letter
destination, a duplicate delivery, a message restored twice) is edited
once and the edit applied to every stored copy the filters select, each
replayed as dlq replay replays it (one publish per failure, every copy
removed); copies whose bodies (or, with --headers or --set, headers)
differ are refused before anything is sent (exit 2), each named: pick one
with --topic or --since/--until. A copy dead-lettered again while the
edit runs is left, listed and counted (exit 1).

--dry-run prints the message that would be sent (as a JSON record) and
its destination, and changes nothing.`,
		Example: `  # Fix a body by hand and send it back
  brighter dlq edit 4f6c0a9e-8f7b-4a55-9a3c-1d2e3f405060 orders

  # From a script: a corrected body, a header and a bag entry
  brighter dlq edit 4f6c0a9e-... orders --body-file fixed.json --set contentType=application/json --set fixedBy=ops

  # See what would be sent
  brighter dlq edit 4f6c0a9e-... sqs://orders-dlq --to orders --body-file fixed.json --dry-run`,
		Args: cmdutil.ArgsBetween(1, 2, "the message ID and the destination, a SUBSCRIPTION name or a URL (or name the destination with -s/--subscription)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dest, err := o.Destination(cmd, args[1:])
			if err != nil {
				return err
			}
			o.ToSet = cmd.Flags().Changed("to")
			o.JournalSet = cmd.Flags().Changed("journal")
			o.id, o.Dest = args[0], dest
			if runF != nil {
				return runF(o)
			}
			// Signals are handled from the start, connecting included.
			defer o.HoldSignals()()
			return o.EndRun(runEdit(cmd.Context(), o))
		},
	}
	o.AddCommon(cmd)
	o.AddDestinationFlags(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&o.headers, "headers", false, "edit the headers and bag too, as YAML")
	fl.StringVar(&o.bodyFile, "body-file", "", `take the new body from this file ("-": stdin) instead of an editor`)
	fl.StringArrayVar(&o.sets, "set", nil, "set a header field (contentType, correlationId, ...) or else a bag entry: key=value (repeatable)")
	return cmd
}

// runEdit edits message o.id of o.Dest and replays the edited copy.
func runEdit(ctx context.Context, o *Options) error {
	id, dest := o.id, o.Dest
	if strings.TrimSpace(id) == "" {
		return cmdutil.UsageErr(errors.New("a message id is required: dlq edit ID [SUBSCRIPTION|URL]"))
	}
	for _, kv := range o.sets {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return cmdutil.UsageErr(fmt.Errorf("--set %q: give key=value", redact.Quoted(kv)))
		}
		if err := inspect.CheckSetKey(k); err != nil {
			return cmdutil.UsageErr(fmt.Errorf("--set %s: %w; nothing was read or sent", redact.Quoted(kv), err))
		}
	}
	// Every stored copy of the id that the filters select is edited and
	// replayed, as dlq replay replays every copy of an id it selects.
	o.IDs, o.Limit, o.GroupIDs = []string{id}, 0, nil
	o.EditID = id
	o.Yes, o.Copy = true, false
	var sent *message.Message
	o.Prepare = func(ctx context.Context, t *transport.Target, src *inspect.Source) (func(m, c *message.Message) error, error) {
		// The default editor (vi) needs a terminal: off one, without $EDITOR,
		// an edit that opens an editor is refused before anything is read.
		if (o.bodyFile == "" || o.headers) && strings.TrimSpace(o.Env("EDITOR")) == "" && !o.IO.InTTY {
			return nil, cmdutil.UsageErr(errors.New("dlq edit opens vi (no $EDITOR is set) and stdin is not a terminal: give the new body with --body-file F (\"-\": stdin) and --set key=value, or set $EDITOR to an editor that runs without a terminal; nothing was read or sent"))
		}
		f, err := o.Filter()
		if err != nil {
			return nil, cmdutil.UsageErr(err)
		}
		cs, err := fetchCopies(ctx, src, id, f)
		if err != nil {
			return nil, err
		}
		if err := cs.check(src.Name, o.headers || len(o.sets) > 0); err != nil {
			return nil, err
		}
		o.EditFound = len(cs.selected)
		cs.announce(o.IO.ErrOut, src.Name)
		e, err := o.edit(ctx, cs.selected[0])
		if err != nil {
			return nil, err
		}
		return func(m, c *message.Message) error {
			if err := e.Transform(m, c); err != nil {
				return err
			}
			sent = c
			if o.DryRun {
				return o.showDryRun(c)
			}
			return nil
		}, nil
	}
	err := o.ReplayOptions.Run(ctx, dest)
	if err == nil && sent == nil {
		return cmdutil.FailureErr(fmt.Errorf("message %s was not replayed: it was not selected on the second read", redact.Quoted(id)))
	}
	return err
}

// edit makes the edit of orig the flags ask for: editor or --body-file,
// --headers, --set; a JSON body that does not parse reopens the editor on a
// terminal and is a usage error otherwise.
//
// A SIGTERM while the editor is open stops it (SIGTERM, then SIGKILL)
// and ends the edit with exit 130, nothing sent; nothing is held then
// (the copies read were released). A second signal exits at once. SIGINT
// does the same for an editor off a terminal; on a terminal it is the
// editor's (a ctrl+c typed into vi reaches brighter too) and is passed
// over while the editor runs.
func (o *Options) edit(ctx context.Context, orig *message.Message) (inspect.Edit, error) {
	var body []byte
	if o.bodyFile != "" {
		var err error
		if o.bodyFile == "-" {
			body, err = io.ReadAll(o.IO.In)
		} else {
			body, err = os.ReadFile(o.bodyFile)
		}
		if err != nil {
			return inspect.Edit{}, cmdutil.UsageErr(fmt.Errorf("--body-file: %w", err))
		}
	}
	s, err := shared.NewEditSession(orig, o.headers, body == nil)
	if err != nil {
		return inspect.Edit{}, cmdutil.FailureErr(err)
	}
	defer s.Close()
	for {
		for _, c := range s.Commands(o.Editor()) {
			// The editor gets the terminal; input that is not a file (a
			// test's) is kept for the questions, not copied into it.
			c.Stdout, c.Stderr = o.IO.ErrOut, o.IO.ErrOut
			if f, ok := o.IO.In.(*os.File); ok {
				c.Stdin = f
			}
			if err := o.runEditor(ctx, c); err != nil {
				return inspect.Edit{}, err
			}
		}
		e, err := s.Result(body, o.sets, o.Now())
		if err == nil {
			return e, nil
		}
		if s.EditsBody() && o.IO.InTTY && o.askReopen(err) {
			continue
		}
		return inspect.Edit{}, cmdutil.UsageErr(fmt.Errorf("dlq edit %s: %w; nothing was sent", redact.Quoted(orig.Header.MessageID), err))
	}
}

// runEditor runs the editor c, watching signals meanwhile: a signal stops
// it (shared.RunStoppable) and is an interruption (exit 130, nothing sent).
func (o *Options) runEditor(ctx context.Context, c *exec.Cmd) error {
	logger, err := o.Factory.Logger()
	if err != nil {
		return err
	}
	terminal := o.IO.InTTY || onTerminal(o.IO.ErrOut)
	ectx, done := o.Editing(ctx, logger, terminal)
	err = shared.RunStoppable(ectx, c, !terminal)
	if done() {
		return &cmdutil.ExitError{Code: shared.ExitInterrupted, Err: fmt.Errorf("edit %s: interrupted while the editor was open; the editor was stopped and nothing was sent", redact.Quoted(o.id))}
	}
	if err != nil {
		return cmdutil.FailureErr(fmt.Errorf("editor %s: %w (nothing was sent)", redact.Cut(c.String()), err))
	}
	return nil
}

// onTerminal reports whether w is a terminal (the editor's stderr: an
// editor on a terminal must stay in its foreground process group).
func onTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// askReopen says why the edit is refused and asks whether to edit again.
func (o *Options) askReopen(err error) bool {
	fmt.Fprintf(o.IO.ErrOut, "%s\nEdit again? [Y/n] ", err)
	line, err := bufio.NewReader(o.IO.In).ReadString('\n')
	if err != nil && strings.TrimSpace(line) == "" {
		fmt.Fprintln(o.IO.ErrOut)
		return false // no answer (end of input): abandon, nothing sent
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "", "y", "yes":
		return true
	}
	return false
}

// editedRecord is the line of a --dry-run with --output json.
type editedRecord struct {
	Type    string          `json:"type"`
	Message json.RawMessage `json:"message"`
}

// showDryRun prints the message a dry run would send.
func (o *Options) showDryRun(c *message.Message) error {
	rec, err := message.MarshalRecordJSON(c)
	if err != nil {
		return fmt.Errorf("show the edited message: %w", err)
	}
	if o.Format == export.JSON {
		if err := export.NewLines(o.Out()).Encode(editedRecord{Type: "edited", Message: rec}); err != nil {
			return fmt.Errorf("show the edited message: %w", err)
		}
		return nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, rec, "", "  "); err != nil {
		return fmt.Errorf("show the edited message: %w", err)
	}
	_, err = fmt.Fprintf(o.Out(), "would send:\n%s\n", buf.Bytes())
	return err
}

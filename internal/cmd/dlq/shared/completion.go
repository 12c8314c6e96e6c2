package shared

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/redact"
)

// groupIDCompletionDeadline bounds the read behind the completion of
// --group-id: a shell must not wait on a slow or unreachable broker.
const groupIDCompletionDeadline = 3 * time.Second

// completeGroupIDs completes --group-id with the failure groups
// of what the command line names, each described by its count, reason,
// original topic and normalised rejection message: for dlq restore those of
// the archive FILE, else those of the destination, read as dlq stats reads
// it (nothing removed, every message released at the end) within
// groupIDCompletionDeadline, with the other filter flags applied; a
// deadline reached completes the groups read so far. Anything that fails
// completes nothing (logged only with cobra's completion debugging).
func (o *Options) completeGroupIDs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := context.WithTimeout(context.Background(), groupIDCompletionDeadline)
	defer cancel()
	f, err := o.Filter()
	if err != nil {
		cobra.CompDebugln(fmt.Sprintf("group ids: %v", err), false)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	f.GroupIDs = nil
	var st *inspect.Stats
	if cmd.Name() == "restore" {
		st, err = archiveGroups(args, f)
	} else {
		st, err = o.readGroups(ctx, cmd, args, f)
	}
	if st == nil {
		cobra.CompDebugln(fmt.Sprintf("group ids: %v", err), false)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	out := make([]cobra.Completion, 0, len(st.Groups))
	for _, g := range st.Groups {
		if strings.HasPrefix(g.ID, toComplete) {
			desc := fmt.Sprintf("%d %s %s", g.Count, g.Reason, redact.URL(g.OriginalTopic))
			if g.Message != "" { // a native redrive carries no rejection message
				desc += ": " + g.Message
			}
			out = append(out, cobra.CompletionWithDesc(g.ID, redact.Cut(desc)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// readGroups collects the failure groups of the destination the command
// line names (the argument or --subscription) until ctx ends.
func (o *Options) readGroups(ctx context.Context, cmd *cobra.Command, args []string, f inspect.Filter) (*inspect.Stats, error) {
	dest, err := o.Destination(cmd, args)
	if err != nil {
		return nil, err
	}
	t, dt, err := o.Target(dest)
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	wait := o.Wait
	o.Wait = min(o.Wait, time.Second)
	defer func() { o.Wait = wait }()
	ch, err := o.OpenReader(ctx, t, dt, false, quiet)
	if err != nil {
		return nil, err
	}
	defer ch.Close(context.WithoutCancel(ctx))
	st, _, err := inspect.Collect(ctx, o.Source(t, ch, quiet), f)
	return st, err
}

// archiveGroups collects the failure groups of the archive restore's
// argument names.
func archiveGroups(args []string, f inspect.Filter) (*inspect.Stats, error) {
	if len(args) == 0 || args[0] == "-" {
		return nil, errors.New("no archive file to read")
	}
	fh, err := os.Open(args[0])
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	ms, err := inspect.ReadArchive(fh, args[0])
	if err != nil {
		return nil, err
	}
	return inspect.CollectMessages(ms, f), nil
}

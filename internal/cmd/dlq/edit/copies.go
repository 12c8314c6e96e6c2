package edit

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// The stored copies of the id dlq edit edits: a message dead-lettered by
// two subscriptions sharing one dead-letter destination, delivered twice,
// or restored twice is stored more than once under one id. The edit is
// applied to every copy the filters select (each replayed as dlq replay
// replays it), and only when one edit fits them all.

// copies are the stored copies of one id read before the edit.
type copies struct {
	id string
	// selected are the copies the filters select, in the order read (each
	// a clone; the messages were released).
	selected []*message.Message
	// others is how many copies of the id the other filters (--topic,
	// --since, --until, --reason, --grep) do not select: they stay.
	others int
}

// fetchCopies reads every stored copy of message id in src (each held
// while the scan runs, all released when it ends) and sorts them by f,
// the command's filters. It returns a failure (exit 1) when the scan fails
// or f selects no copy.
func fetchCopies(ctx context.Context, src *inspect.Source, id string, f inspect.Filter) (copies, error) {
	cs := copies{id: id}
	f.IDs, f.Limit = []string{id}, 0
	_, err := inspect.Scan(ctx, src, inspect.Filter{IDs: []string{id}}, func(_ context.Context, m *message.Message) (bool, error) {
		if f.Match(m) {
			cs.selected = append(cs.selected, m.Clone())
		} else {
			cs.others++
		}
		return false, nil
	})
	if err != nil {
		return cs, cmdutil.FailureErr(fmt.Errorf("read %s: %w", src.Name, err))
	}
	if len(cs.selected) == 0 {
		if cs.others > 0 {
			return cs, cmdutil.FailureErr(fmt.Errorf("message %s is in %s (%s) but the filters select none of them", redact.Quoted(id), src.Name, shared.Plural(cs.others, "stored copy")))
		}
		return cs, cmdutil.FailureErr(fmt.Errorf("message %s is not in %s (dlq peek lists what is)", redact.Quoted(id), src.Name))
	}
	return cs, nil
}

// check refuses (exit 2, before anything is edited or sent) copies one
// edit cannot be applied to: bodies that differ, or, when the edit changes
// the headers (headers), editable headers that differ. The refusal names
// every copy and how to pick one.
func (cs copies) check(name string, headers bool) error {
	what, keys := inspect.EditCopiesDiffer(cs.selected, headers)
	if what == "" {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "message %s has %d stored copies in %s whose %s differ", redact.Quoted(cs.id), len(cs.selected), name, what)
	if len(keys) > 0 {
		quoted := make([]string, len(keys))
		for i, k := range keys {
			quoted[i] = redact.Quote(k)
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(quoted, ", "))
	}
	b.WriteString(", so one edit cannot be applied to them all; nothing was edited or sent:\n")
	for i, m := range cs.selected {
		fmt.Fprintf(&b, "  copy %d: %s, body SHA-256 %s\n", i+1, describeCopy(m), inspect.BodySHA256(m.Body)[:12])
	}
	b.WriteString("pick one with --topic ORIGINALTOPIC, or --since/--until around its rejection time, and edit each apart")
	return cmdutil.UsageErr(fmt.Errorf("%s", b.String()))
}

// announce says, on w, that the edit goes to several copies (nothing for
// one copy the filters select and no other).
func (cs copies) announce(w io.Writer, name string) {
	if len(cs.selected) == 1 && cs.others == 0 {
		return
	}
	var each []string
	for _, m := range cs.selected {
		each = append(each, describeCopy(m))
	}
	fmt.Fprintf(w, "edit %s: %s in %s (%s)", redact.Quoted(cs.id), shared.Plural(len(cs.selected), "stored copy"), name, strings.Join(each, "; "))
	if len(cs.selected) > 1 {
		fmt.Fprint(w, ": the edit is applied to each, each replayed as dlq replay replays it (one publish per failure, every copy removed)")
	}
	if cs.others > 0 {
		fmt.Fprintf(w, "; %s of it the filters do not select %s where %s", shared.Plural(cs.others, "other copy"), stay(cs.others), itThey(cs.others))
	}
	fmt.Fprintln(w)
}

// describeCopy names one stored copy: when and from where it was
// rejected.
func describeCopy(m *message.Message) string {
	d := inspect.Describe(m)
	at := "no rejection time"
	if !d.RejectedAt.IsZero() {
		at = "rejected " + d.RejectedAt.UTC().Format(time.RFC3339Nano)
	}
	from := d.OriginalTopic
	if from == "" {
		from = "no originalTopic"
	}
	return fmt.Sprintf("%s from %s", at, redact.Quote(redact.URL(from)))
}

func stay(n int) string {
	if n == 1 {
		return "stays"
	}
	return "stay"
}

func itThey(n int) string {
	if n == 1 {
		return "it is"
	}
	return "they are"
}

package shared

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/message"
)

// archiveRecordLine is one archive line (a record and its newline).
func archiveRecordLine(t *testing.T, id string) string {
	t.Helper()
	rec, err := message.MarshalRecordJSON(message.New(id, "orders", message.MTCommand, []byte(`{"n":1}`)))
	if err != nil {
		t.Fatal(err)
	}
	return string(rec) + "\n"
}

// TestArchiveFileChecked: dlq archive --file F checks an existing F
// before it appends: a file that is not an archive (text, a README, a
// binary, a bad line among records, a last line without a newline that
// follows no record or does not start a record) is refused as a usage
// error naming the file and line, and left byte for byte; only an
// unfinished last line that starts a record after complete records (what
// a SIGKILLed archive leaves) is cut; a complete archive and an empty file
// are left alone; a missing file is created, mode 0600.
func TestArchiveFileChecked(t *testing.T) {
	t.Parallel()
	a, b := archiveRecordLine(t, "a"), archiveRecordLine(t, "b")
	long := "{" + strings.Repeat("x", 100000) // longer than one read
	for _, tc := range []struct {
		name, in, want, refusal string
	}{
		{name: "empty", in: "", want: ""},
		{name: "complete", in: a + b, want: a + b},
		{name: "blank lines", in: a + "\n" + b + "  ", want: a + "\n" + b + "  "},
		{name: "half a record", in: a + b[:20], want: a},
		{name: "long half record", in: a + long, want: a},
		{name: "text with a half line", in: "line one\nhalf", refusal: ":1: "},
		{name: "readme", in: "# brighter\n\nA message pump.\n", refusal: ":1: "},
		{name: "binary", in: "\x7fELF\x02\x01\x01\x00\x00\n\x00\x00" + strings.Repeat("\x00", 5000), refusal: ":1: "},
		{name: "bad line among records", in: a + "not json\n" + b, refusal: ":2: "},
		{name: "half line not a record", in: a + "half", refusal: ":2: "},
		{name: "half record alone", in: b[:20], refusal: ":1: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.jsonl")
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			af, err := CheckArchiveFile(path)
			if tc.refusal != "" {
				var ee *cmdutil.ExitError
				if !errors.As(err, &ee) || ee.Code != cmdutil.ExitUsage || !strings.Contains(err.Error(), path+tc.refusal) {
					t.Fatalf("checkArchiveFile = %v; want exit %d naming %s", err, cmdutil.ExitUsage, path+tc.refusal)
				}
				if got, _ := os.ReadFile(path); string(got) != tc.in {
					t.Fatalf("a refused file was changed: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fh, err := af.Open(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			_ = fh.Close()
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Fatalf("file holds %q, want %q", got, tc.want)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "new.jsonl")
	af, err := CheckArchiveFile(missing)
	if err != nil || af.file != nil {
		t.Fatalf("a missing file: %v, %v", af.file, err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checking a missing file created it: %v", err)
	}
	fh, err := af.Open(missing, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	_ = fh.Close()
	if st, err := os.Stat(missing); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("created file: %v, %v; want mode 0600", st, err)
	}
}

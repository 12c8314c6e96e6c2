package shared

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// Editor is $EDITOR, or vi: the editor dlq edit and the triage console run.
func (o *Options) Editor() string {
	if e := strings.TrimSpace(o.Env("EDITOR")); e != "" {
		return e
	}
	return "vi"
}

// EditSession is one message's edit in files: the body (pretty-printed
// when JSON) and, with headers, the headers and bag as YAML. dlq edit runs
// the editor on them itself; the triage console runs the same commands
// through tea.ExecProcess.
type EditSession struct {
	// Orig is the message as it was dead-lettered.
	Orig        *message.Message
	dir         string
	BodyPath    string // "" when the body is not edited in a file
	headersPath string // "" without --headers
	written     []byte // what BodyPath held before the editor ran
}

// NewEditSession writes orig's editable parts to a temporary directory.
func NewEditSession(orig *message.Message, headers, body bool) (*EditSession, error) {
	dir, err := os.MkdirTemp("", "brighter-edit-")
	if err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	s := &EditSession{Orig: orig, dir: dir}
	if headers {
		doc, err := yaml.Marshal(inspect.HeadersOf(orig))
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("edit: headers as YAML: %w", err)
		}
		s.headersPath = filepath.Join(dir, "headers.yaml")
		if err := os.WriteFile(s.headersPath, doc, 0o600); err != nil {
			s.Close()
			return nil, fmt.Errorf("edit: %w", err)
		}
	}
	if body {
		s.written, s.BodyPath = orig.Body, filepath.Join(dir, "body.txt")
		if inspect.IsJSON(orig.Header.ContentType) {
			s.BodyPath = filepath.Join(dir, "body.json")
			var buf bytes.Buffer
			if json.Indent(&buf, orig.Body, "", "  ") == nil {
				buf.WriteByte('\n')
				s.written = buf.Bytes()
			}
		}
		if err := os.WriteFile(s.BodyPath, s.written, 0o600); err != nil {
			s.Close()
			return nil, fmt.Errorf("edit: %w", err)
		}
	}
	return s, nil
}

// EditsBody reports whether the editor edits the body.
func (s *EditSession) EditsBody() bool { return s.BodyPath != "" || s.headersPath != "" }

// Commands are the editor runs of the session, the headers first. As git
// does, an editor without shell characters (editorShellChars) is run
// itself with the file as its argument, so a terminal's ctrl+c reaches
// only the editor and brighter; any other is run by sh, so EDITOR may carry
// arguments ("code --wait").
func (s *EditSession) Commands(editor string) []*exec.Cmd {
	var cs []*exec.Cmd
	for _, p := range []string{s.headersPath, s.BodyPath} {
		if p == "" {
			continue
		}
		if strings.ContainsAny(editor, editorShellChars) {
			cs = append(cs, exec.Command("sh", "-c", editor+` "$1"`, "sh", p))
		} else {
			cs = append(cs, exec.Command(editor, p))
		}
	}
	return cs
}

// editorShellChars are the characters that make an EDITOR a shell
// command (git's list): one without them names the editor alone.
const editorShellChars = "|&;<>()$`\\\"' \t\n*?[#~=%"

// Result reads the edited files back: body (when not nil) replaces the
// body file's; sets are applied to the headers; the body must be valid for
// its content type (inspect.ValidateBody).
func (s *EditSession) Result(body []byte, sets []string, now time.Time) (inspect.Edit, error) {
	e := inspect.Edit{OriginalSHA256: inspect.BodySHA256(s.Orig.Body), At: now, Body: body}
	if s.BodyPath != "" {
		b, err := os.ReadFile(s.BodyPath)
		if err != nil {
			return e, fmt.Errorf("read the edited body: %w", err)
		}
		e.Body = b
		if bytes.Equal(b, s.written) {
			e.Body = s.Orig.Body // unchanged: the original bytes, not the pretty-printed ones
		}
	}
	h := inspect.HeadersOf(s.Orig)
	if s.headersPath != "" {
		doc, err := os.ReadFile(s.headersPath)
		if err != nil {
			return e, fmt.Errorf("read the edited headers: %w", err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return e, fmt.Errorf("the headers are not valid YAML: %w", err)
		}
		// What --set refuses, the YAML may not put into the copy either.
		if err := inspect.CheckEditedHeaders(m, h); err != nil {
			return e, fmt.Errorf("the edited headers: %w", err)
		}
		h = inspect.EditHeaders{}
		if err := yaml.Unmarshal(doc, &h); err != nil {
			return e, fmt.Errorf("the headers are not valid YAML: %w", err)
		}
	}
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		if err := h.Set(k, v); err != nil {
			return e, fmt.Errorf("--set %s: %w", redact.Quoted(kv), err)
		}
	}
	if s.headersPath != "" || len(sets) > 0 {
		if err := h.Check(); err != nil {
			return e, err
		}
		e.Headers = &h
		from := inspect.HeadersOf(s.Orig)
		e.From = &from
	}
	ct := s.Orig.Header.ContentType
	if e.Headers != nil {
		ct = e.Headers.ContentType
	}
	if err := inspect.ValidateBody(ct, e.Body); err != nil {
		return e, err
	}
	return e, nil
}

// Close removes the session's files.
func (s *EditSession) Close() { _ = os.RemoveAll(s.dir) }

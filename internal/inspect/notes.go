package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// GroupNote is an operator's note on one failure group of one dead-letter
// destination.
type GroupNote struct {
	// Text is the note.
	Text string `json:"text"`
	// By is who wrote it (user@host), At when.
	By string    `json:"by,omitempty"`
	At time.Time `json:"at"`
}

// GroupNotes are the notes of a state directory's file: a JSON object
// keyed by NoteKey (the destination and the group id), kept beside the
// replay journals.
type GroupNotes struct {
	path string
}

// NewGroupNotes keeps notes in the file at path (created, mode 0600, its
// directory 0700, on the first SetNote).
func NewGroupNotes(path string) *GroupNotes { return &GroupNotes{path: path} }

// Path is the notes' file.
func (n *GroupNotes) Path() string { return n.path }

// NoteKey is the key of group's note on the destination source (a URL).
func NoteKey(source, group string) string { return source + " " + group }

// Read returns every note of source by group id (none when the file does
// not exist). Errors name the path.
func (n *GroupNotes) Read(source string) (map[string]GroupNote, error) {
	all, err := n.readAll()
	if err != nil {
		return nil, err
	}
	out := map[string]GroupNote{}
	for k, v := range all {
		if g, ok := strings.CutPrefix(k, source+" "); ok {
			out[g] = v
		}
	}
	return out, nil
}

func (n *GroupNotes) readAll() (map[string]GroupNote, error) {
	b, err := os.ReadFile(n.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]GroupNote{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("group notes %s: %w", n.path, err)
	}
	all := map[string]GroupNote{}
	if len(strings.TrimSpace(string(b))) > 0 {
		if err := json.Unmarshal(b, &all); err != nil {
			return nil, fmt.Errorf("group notes %s: %w", n.path, err)
		}
	}
	return all, nil
}

// Set writes the note of group on source (an empty text removes it),
// replacing the file atomically (a temporary file renamed over it). Errors
// name the path.
func (n *GroupNotes) Set(source, group string, note GroupNote) error {
	all, err := n.readAll()
	if err != nil {
		return err
	}
	if strings.TrimSpace(note.Text) == "" {
		delete(all, NoteKey(source, group))
	} else {
		all[NoteKey(source, group)] = note
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return fmt.Errorf("group notes %s: %w", n.path, err)
	}
	if err := os.MkdirAll(filepath.Dir(n.path), 0o700); err != nil {
		return fmt.Errorf("group notes %s: %w", n.path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(n.path), ".notes-*")
	if err != nil {
		return fmt.Errorf("group notes %s: %w", n.path, err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("group notes %s: %w", n.path, err)
	}
	if err := os.Rename(tmp.Name(), n.path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("group notes %s: %w", n.path, err)
	}
	return nil
}

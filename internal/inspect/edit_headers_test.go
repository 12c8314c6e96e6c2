package inspect

import (
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/brightergo/brighter/internal/message"
)

// TestCheckEditedHeaders_RefusesWhatSetRefuses: the YAML of dlq
// edit --headers may not put into the copy what --set may not (rejection
// metadata, the replay's own bag keys, id/topic/handledCount/...), nor a
// value that is not a string; each refusal wraps ErrNotEditable and names
// the key. A bag entry shown to the editor and left as it was is taken,
// whatever its type.
func TestCheckEditedHeaders_RefusesWhatSetRefuses(t *testing.T) {
	orig := EditHeaders{MessageType: "MT_EVENT", Bag: message.Bag{"tenant": "acme", "attempt": float64(3)}}
	for _, tc := range []struct{ doc, want string }{
		{"bag:\n  rejectionReason: X\n", `bag key "rejectionReason" cannot be set by an edit: it is rejection metadata`},
		{"bag:\n  RejectionReason: X\n", `bag key "RejectionReason" cannot be set by an edit: it is rejection metadata`},
		{"bag:\n  originalTopic: elsewhere\n", `bag key "originalTopic" cannot be set by an edit: it is rejection metadata`},
		{"bag:\n  editedAt: now\n", `bag key "editedAt" cannot be set by an edit: it is written by the replay itself`},
		{"bag:\n  handledCount: \"5\"\n", `bag key "handledCount" cannot be set by an edit: the copy's handled count is 0; --keep-count`},
		{"bag:\n  retries: 2\n", `bag key "retries" cannot be set by an edit with a number value`},
		{"bag:\n  flags: [a]\n", `bag key "flags" cannot be set by an edit with a list value`},
		{"bag:\n  nested: {a: b}\n", `bag key "nested" cannot be set by an edit with a mapping value`},
		{"bag:\n  ok: true\n", `bag key "ok" cannot be set by an edit with a boolean value`},
		{"bag:\n  attempt: 4\n", `bag key "attempt" cannot be set by an edit with a number value`},
		{"bag: [a]\n", `header "bag" cannot be set by an edit with a list value`},
		{"correlationId: 42\n", `header "correlationId" cannot be set by an edit with a number value`},
		{"rejectionReason: X\n", `header "rejectionReason" cannot be set by an edit: it is rejection metadata`},
		{"handledCount: 3\n", `header "handledCount" cannot be set by an edit: the copy's handled count is 0; --keep-count`},
		{"id: x\n", `header "id" cannot be set by an edit: the copy keeps the message id; --new-id`},
		{"corelationId: x\n", `header "corelationId" cannot be set by an edit: it is not a header field`},
	} {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte("messageType: MT_EVENT\n"+tc.doc), &doc); err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		err := CheckEditedHeaders(doc, orig)
		if !errors.Is(err, ErrNotEditable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want ErrNotEditable saying %q", tc.doc, err, tc.want)
		}
	}
	for _, ok := range []string{
		"bag:\n  tenant: acme\n  attempt: 3\n  fixedBy: ops\n",
		"bag: {}\n",
		"bag:\n",
		"correlationId:\ncontentType: application/json\n",
		"",
	} {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte("messageType: MT_EVENT\n"+ok), &doc); err != nil {
			t.Fatalf("%q: %v", ok, err)
		}
		if err := CheckEditedHeaders(doc, orig); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

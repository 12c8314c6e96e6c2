package observe

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
)

// TestStream_RecordsShowNoSecretOfTheRun: with the run's Redactor, a
// record's description and error show none of its secrets, whoever wrote
// the text (a handler's reason, a transport's error), and URLs in them
// pass the URL rule; a secret the Redactor learns later is masked from
// then on.
func TestStream_RecordsShowNoSecretOfTheRun(t *testing.T) {
	const early, late = "exec-env-SECRET-11", "aws-key-SECRET-12"
	run := &redact.Redactor{}
	run.Add(early)
	st := NewStream(16, 0)
	st.SetRedactor(run)
	rd := st.Subscribe()
	defer rd.Close()
	run.Add(late)
	m := &message.Message{Header: message.Header{MessageID: "m1", MessageType: message.MTEvent}}
	st.Observe(pump.Event{Kind: pump.EventRejected, Time: time.Now(), Subscription: "s", Message: m,
		Reason: message.ReasonDeliveryError, Description: "program said API_TOKEN=" + early + " KEY=" + late})
	st.Observe(pump.Event{Kind: pump.EventChannelFailure, Time: time.Now(), Subscription: "s",
		Err: errors.New("receive: Post \"http://user:pw-in-url@h/q?sig=abc\": " + late)})
	for range 2 {
		select {
		case r := <-rd.C():
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			if !strings.Contains(text, "REDACTED") {
				t.Fatalf("nothing masked: %s", text)
			}
			for _, s := range []string{early, late, "pw-in-url", "abc"} {
				if strings.Contains(text, s) {
					t.Errorf("record shows %q: %s", s, text)
				}
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no record")
		}
	}
}

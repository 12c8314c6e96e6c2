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
	for _, text := range readRecordTexts(t, rd, 2) {
		if !strings.Contains(text, "REDACTED") {
			t.Fatalf("nothing masked: %s", text)
		}
		for _, s := range []string{early, late, "pw-in-url", "abc"} {
			if strings.Contains(text, s) {
				t.Errorf("record shows %q: %s", s, text)
			}
		}
	}
}

// readRecordTexts reads n records from rd, each as its JSON text, failing t
// when one does not come within 5 s.
func readRecordTexts(t *testing.T, rd *Reader, n int) []string {
	t.Helper()
	var texts []string
	for range n {
		select {
		case r := <-rd.C():
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		case <-time.After(5 * time.Second):
			t.Fatal("no record")
		}
	}
	return texts
}

// Events observed while no reader is connected are kept in the backlog and
// made records only when a reader subscribes: those records too show no
// secret of the run, and the message detail of a received one is the
// message's.
func TestStream_BacklogRecordsMadeLaterShowNoSecretOfTheRun(t *testing.T) {
	const secret = "exec-env-SECRET-21"
	run := &redact.Redactor{}
	run.Add(secret)
	st := NewStream(16, 8)
	st.SetRedactor(run)
	m := &message.Message{Header: message.Header{MessageID: "m1", MessageType: message.MTEvent, Topic: "orders"}, Body: []byte("hello")}
	st.Observe(pump.Event{Kind: pump.EventReceived, Time: time.Now(), Subscription: "s", Message: m})
	st.Observe(pump.Event{Kind: pump.EventChannelFailure, Time: time.Now(), Subscription: "s", Err: errors.New("receive: " + secret)})
	rd := st.Subscribe()
	defer rd.Close()
	texts := readRecordTexts(t, rd, 2)
	if !strings.Contains(texts[0], `"kind":"received"`) || !strings.Contains(texts[0], `"messageId":"m1"`) || !strings.Contains(texts[0], `"bodyPreview":"hello"`) {
		t.Errorf("received record: %s", texts[0])
	}
	if strings.Contains(texts[1], secret) || !strings.Contains(texts[1], "REDACTED") {
		t.Errorf("channel-failure record: %s", texts[1])
	}
}

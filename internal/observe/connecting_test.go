package observe

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// drain returns what rd holds now, in order.
func drain(rd *Reader) []*Record {
	var out []*Record
	for {
		select {
		case r := <-rd.C():
			out = append(out, r)
		default:
			return out
		}
	}
}

// While consume opens its channels, /events says which one is being
// opened, since when, and which are open: a reader connected before gets
// each connecting record live; a reader that connects meanwhile gets the
// latest after the descriptions (and none of the earlier ones); a
// connected record ends it, and a reader that connects after gets no
// connecting record. Each connecting record carries its subscription's
// budget, so a watcher that knows no connecting kind (it reads a budget
// from every record naming a subscription) keeps the right one, and the
// line reads with ReadEvents (today's watch) as any other.
func TestStream_ConnectingRecordsSayWhichChannelIsOpen(t *testing.T) {
	st := NewStream(64, 16)
	for i, n := range []string{"a-memory", "b-silent", "c-later"} {
		st.Describe(n, SubscriptionInfo{Transport: "sqs", Budget: 3 + i})
	}
	early := st.Subscribe()
	defer early.Close()
	t1 := time.Date(2026, 12, 6, 11, 0, 0, 0, time.UTC)
	st.Connecting("a-memory", nil, t1)
	st.Connecting("b-silent", []string{"a-memory"}, t1.Add(time.Second))

	mid := st.Subscribe()
	defer mid.Close()
	got := drain(mid)
	if len(got) != 4 || got[3].Kind != KindConnecting {
		t.Fatalf("a reader that connects while b-silent opens got %d records %v, want the 3 descriptions then b-silent's connecting record", len(got), kinds(got))
	}
	c := got[3]
	if c.Subscription != "b-silent" || !c.Since.Equal(t1.Add(time.Second)) || !slices.Equal(c.Opened, []string{"a-memory"}) || c.Budget != 4 {
		t.Errorf("connecting record %+v, want b-silent since %v, opened [a-memory], budget 4", c, t1.Add(time.Second))
	}

	st.Connected()
	late := st.Subscribe()
	defer late.Close()
	if got := drain(late); len(got) != 3 || slices.Contains(kinds(got), KindConnecting) {
		t.Errorf("a reader that connects once every channel is open got %v, want the 3 descriptions only", kinds(got))
	}
	if got, want := kinds(drain(early)), []string{KindSubscription, KindSubscription, KindSubscription, KindConnecting, KindConnecting, KindConnected}; !slices.Equal(got, want) {
		t.Errorf("a reader connected throughout got %v, want %v", got, want)
	}

	line, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var read []Record
	if err := ReadEvents(bytes.NewReader(append(line, '\n')), func(r Record) { read = append(read, r) }); err != nil || len(read) != 1 {
		t.Fatalf("ReadEvents(%s) = %v, %d records", line, err, len(read))
	}
	if r := read[0]; r.Kind != KindConnecting || r.Subscription != "b-silent" || r.Budget != 4 || !r.Since.Equal(c.Since) || !slices.Equal(r.Opened, c.Opened) {
		t.Errorf("read back %+v from %s", r, line)
	}
}

func kinds(rs []*Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Kind
	}
	return out
}

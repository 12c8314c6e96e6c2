package inspect_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// TestGroupKey_ID_StableAndDistinct: a group id depends only on the
// four fields (a fixed key has a fixed id, on any machine, in any run), each
// field changes it, and the fields cannot run into one another.
func TestGroupKey_ID_StableAndDistinct(t *testing.T) {
	k := inspect.GroupKey{OriginalTopic: "orders", MessageType: "MT_COMMAND", Reason: "DeliveryError", Message: "order <n> timed out"}
	if got, want := k.ID(), "921f815d2f4c"; got != want {
		t.Fatalf("ID() = %q, want %q (a changed id breaks every --group-id an operator has noted)", got, want)
	}
	seen := map[string]inspect.GroupKey{k.ID(): k}
	for _, v := range []inspect.GroupKey{
		{OriginalTopic: "orders2", MessageType: "MT_COMMAND", Reason: "DeliveryError", Message: "order <n> timed out"},
		{OriginalTopic: "orders", MessageType: "MT_EVENT", Reason: "DeliveryError", Message: "order <n> timed out"},
		{OriginalTopic: "orders", MessageType: "MT_COMMAND", Reason: "Unacceptable", Message: "order <n> timed out"},
		{OriginalTopic: "orders", MessageType: "MT_COMMAND", Reason: "DeliveryError", Message: "order <n> failed"},
		{OriginalTopic: "ordersMT_COMMAND", MessageType: "", Reason: "DeliveryError", Message: "order <n> timed out"},
	} {
		id := v.ID()
		if len(id) != inspect.GroupIDLength || inspect.ValidGroupID(id) != nil {
			t.Fatalf("ID() = %q: not a valid group id", id)
		}
		if other, dup := seen[id]; dup {
			t.Fatalf("%+v and %+v share id %s", v, other, id)
		}
		seen[id] = v
	}
	for _, bad := range []string{"", "abc", "zzzzzzzzzzzz", k.ID() + "0"} {
		if err := inspect.ValidGroupID(bad); err == nil || !strings.Contains(err.Error(), "--group-id") {
			t.Errorf("ValidGroupID(%q) = %v, want an error naming --group-id", bad, err)
		}
	}
	if err := (inspect.Filter{GroupIDs: []string{strings.ToUpper(k.ID())}}).Validate(); err != nil {
		t.Errorf("an upper-case id is refused: %v", err)
	}
	m := message.Stamp(message.New("x", "orders", message.MTCommand, []byte(`{}`)), "dlq",
		message.Rejection{Reason: message.ReasonDeliveryError, Description: "order 42 timed out"}, time.Now())
	if !(inspect.Filter{GroupIDs: []string{strings.ToUpper(k.ID())}}).Match(m) {
		t.Errorf("--group-id %s does not select %+v", k.ID(), inspect.GroupOf(m))
	}
	other := inspect.GroupKey{OriginalTopic: "orders2", MessageType: "MT_COMMAND", Reason: "DeliveryError", Message: "order <n> timed out"}
	if (inspect.Filter{GroupIDs: []string{other.ID()}}).Match(m) {
		t.Errorf("another group's id selects %+v", inspect.GroupOf(m))
	}
}

// groupsByMessage maps the seeded messages' normalised rejection messages
// to their groups; it fails unless the seeded DLQ has the four expected
// groups (m1 and m2 are one: same topic, type, reason and message but for
// the order number).
func groupsByMessage(t *testing.T, st *inspect.Stats) map[string]inspect.Group {
	t.Helper()
	out := map[string]inspect.Group{}
	for _, g := range st.Groups {
		if g.ID != g.GroupKey.ID() {
			t.Fatalf("group %+v: id is not its key's id", g)
		}
		out[g.Message] = g
	}
	if len(st.Groups) != 4 || out["order <n> timed out"].Count != 2 || out["order <n> timed out"].MessageType != "MT_COMMAND" {
		t.Fatalf("groups %+v, want 4 with the two timeouts together", st.Groups)
	}
	return out
}

func sortedIDs(ms []*message.Message) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Header.MessageID)
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// TestGroups_SQS_StableIDSelectsPeekAndReplay (fauxqs): stats gives
// each failure group an id, the same in a second run; --group-id selects
// exactly that group for peek and for replay.
func TestGroups_SQS_StableIDSelectsPeekAndReplay(t *testing.T) {
	c := clients(t)
	dlq, a, _ := seedDLQ(t, c)
	src := source(reader(t, c, dlq, false), dlq)
	st, _, err := inspect.Collect(context.Background(), src, inspect.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	g := groupsByMessage(t, st)["order <n> timed out"]
	again, _, err := inspect.Collect(context.Background(), src, inspect.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if groupsByMessage(t, again)["order <n> timed out"].ID != g.ID {
		t.Fatal("a second stats gives the group another id")
	}
	if got := sortedIDs(peekJSON(t, src, inspect.Filter{GroupIDs: []string{g.ID}})); got != "m1 m2" {
		t.Fatalf("peek --group-id %s shows %q, want m1 m2", g.ID, got)
	}
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{GroupIDs: []string{g.ID}}, inspect.ReplayOptions{})
	if err != nil || sum.Replayed != 2 || sum.Skipped != 3 || sum.Failed != 0 {
		t.Fatalf("replay --group-id: %+v %v", sum, err)
	}
	if got := sortedIDs(drain(t, c, a, false, 2)); got != "m1 m2" {
		t.Fatalf("%s received %q, want m1 m2", a, got)
	}
	if got := sortedIDs(peekJSON(t, src, inspect.Filter{})); got != "m3 m4 m5" {
		t.Fatalf("the DLQ holds %q, want m3 m4 m5", got)
	}
}

// TestGroups_PubSub_StableIDSelectsPeekAndReplay is the same on
// Google's Pub/Sub emulator.
func TestGroups_PubSub_StableIDSelectsPeekAndReplay(t *testing.T) {
	e := newPS(t)
	dlq, a, _ := e.seed(t)
	src := e.source(dlq)
	st, _, err := inspect.Collect(context.Background(), src, inspect.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	g := groupsByMessage(t, st)["order <n> timed out"]
	if got := sortedIDs(peekJSON(t, src, inspect.Filter{GroupIDs: []string{g.ID}})); got != "m1 m2" {
		t.Fatalf("peek --group-id %s shows %q, want m1 m2", g.ID, got)
	}
	sum, err := inspect.Replay(context.Background(), src, dlq, e.producer(t), inspect.Filter{GroupIDs: []string{g.ID}}, inspect.ReplayOptions{})
	if err != nil || sum.Replayed != 2 || sum.Failed != 0 {
		t.Fatalf("replay --group-id: %+v %v", sum, err)
	}
	if got := sortedIDs(e.drain(t, a+"-sub", 2)); got != "m1 m2" {
		t.Fatalf("%s received %q, want m1 m2", a, got)
	}
	again, _, err := inspect.Collect(context.Background(), src, inspect.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Total != 3 {
		t.Fatalf("the dead-letter subscription holds %d, want 3", again.Total)
	}
	for _, og := range again.Groups {
		if og.ID == g.ID {
			t.Fatalf("group %s is still there after its replay: %+v", g.ID, og)
		}
	}
}

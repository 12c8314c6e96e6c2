package rmqtest

import (
	"hash/crc32"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Message is a stored message as a test sees it.
type Message struct {
	// Topic is the topic it is stored on.
	Topic string
	// QueueID and Offset locate it.
	QueueID int32
	Offset  int64
	// MessageID is the client-made message id.
	MessageID string
	// Tag is the message's tag, "" for none.
	Tag string
	// Keys are the message's keys.
	Keys []string
	// MessageGroup is the FIFO message group, "" for none.
	MessageGroup string
	// Properties are the user properties.
	Properties map[string]string
	// Body is the payload.
	Body []byte
	// DeliveryTimestamp is when a delayed message becomes visible (zero for
	// none).
	DeliveryTimestamp time.Time
}

type stored struct {
	msg       *v2.Message
	topic     string
	queue     int32
	offset    int64
	visibleAt time.Time
	group     string
	tag       string
}

type topicState struct {
	queues [][]*stored
	rr     uint32
}

type delivery struct {
	attempts       int32
	invisibleUntil time.Time
	handle         string
	done           bool
}

type groupState struct {
	max      int
	longPoll time.Duration
	state    map[*stored]*delivery
}

// CreateTopic makes the topic if it does not exist.
func (s *Server) CreateTopic(name string) {
	s.mu.Lock()
	s.topicLocked(name)
	s.mu.Unlock()
}

// HasTopic reports whether the topic exists.
func (s *Server) HasTopic(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.topics[name] != nil
}

// Messages returns copies of every message stored on the topic (acknowledged
// ones included: a RocketMQ topic is a log), by queue then offset.
func (s *Server) Messages(topic string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.topics[topic]
	if t == nil {
		return nil
	}
	var out []Message
	for _, q := range t.queues {
		for _, st := range q {
			out = append(out, view(st))
		}
	}
	return out
}

// Pending reports how many messages of the topic the consumer group has not
// yet acknowledged, had filtered out or had dead-lettered.
func (s *Server) Pending(topic, group string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.topics[topic]
	if t == nil {
		return 0
	}
	g := s.groupLocked(group)
	n := 0
	for _, q := range t.queues {
		for _, st := range q {
			if d := g.state[st]; d == nil || !d.done {
				n++
			}
		}
	}
	return n
}

func view(st *stored) Message {
	sp := st.msg.GetSystemProperties()
	m := Message{
		Topic: st.topic, QueueID: st.queue, Offset: st.offset, MessageID: sp.GetMessageId(), Tag: st.tag,
		Keys: slices.Clone(sp.GetKeys()), MessageGroup: st.group, Body: slices.Clone(st.msg.GetBody()),
		Properties: map[string]string{},
	}
	for k, v := range st.msg.GetUserProperties() {
		m.Properties[k] = v
	}
	if sp.GetDeliveryTimestamp() != nil {
		m.DeliveryTimestamp = sp.GetDeliveryTimestamp().AsTime()
	}
	return m
}

func (s *Server) topicLocked(name string) *topicState {
	t := s.topics[name]
	if t == nil {
		t = &topicState{queues: make([][]*stored, s.opts.QueuesPerTopic)}
		s.topics[name] = t
	}
	return t
}

func (s *Server) groupLocked(name string) *groupState {
	g := s.groups[name]
	if g == nil {
		g = &groupState{max: s.opts.MaxDeliveryAttempts, state: map[*stored]*delivery{}}
		s.groups[name] = g
	}
	return g
}

// signalLocked wakes every long poll.
func (s *Server) signalLocked() {
	close(s.notify)
	s.notify = make(chan struct{})
}

// storeLocked appends m to topic, choosing its queue, and returns it.
func (s *Server) storeLocked(topic string, m *v2.Message) *stored {
	t := s.topicLocked(topic)
	sp := m.GetSystemProperties()
	if sp == nil {
		sp = &v2.SystemProperties{}
		m.SystemProperties = sp
	}
	m.Topic = &v2.Resource{Name: topic, ResourceNamespace: m.GetTopic().GetResourceNamespace()}
	st := &stored{msg: m, topic: topic, group: sp.GetMessageGroup(), tag: sp.GetTag()}
	var q int
	if st.group != "" {
		h := fnv.New32a()
		_, _ = h.Write([]byte(st.group))
		q = int(h.Sum32() % uint32(len(t.queues)))
	} else {
		q = int(t.rr % uint32(len(t.queues)))
		t.rr++
	}
	st.queue, st.offset = int32(q), int64(len(t.queues[q]))
	if dt := sp.GetDeliveryTimestamp(); dt != nil {
		st.visibleAt = dt.AsTime()
	}
	sp.QueueId = st.queue
	off := st.offset
	sp.QueueOffset = &off
	sp.StoreTimestamp = timestamppb.Now()
	sp.StoreHost = "127.0.0.1"
	sum := crc32.ChecksumIEEE(m.GetBody())
	sp.BodyDigest = &v2.Digest{Type: v2.DigestType_CRC32, Checksum: strconv.FormatInt(int64(sum), 16)}
	sp.BodyEncoding = v2.Encoding_IDENTITY
	t.queues[q] = append(t.queues[q], st)
	return st
}

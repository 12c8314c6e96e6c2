package config

import (
	"math"
	"strconv"
	"time"
)

// The transport blocks of a subscription (sqs, gcp, rocketmq, memory): one
// table of fields each, and the checks that depend on the transport.

var sqsTable = []field[SQS]{
	{Field: Field{Name: "channelType", Kind: KindEnum, Enum: channelTypes,
		Doc: "pointToPoint reads a queue; pubSub subscribes queue channelName to SNS topic routingKey"},
		at: func(q *SQS) any { return &q.ChannelType }, def: ChannelPointToPoint},
	{Field: Field{Name: "queueType", Kind: KindEnum, Enum: queueTypes, Doc: "standard or fifo"},
		at: func(q *SQS) any { return &q.QueueType }, def: QueueStandard},
	{Field: Field{Name: "visibilityTimeout", Kind: KindDuration,
		Doc: "the queue's visibility timeout; 0s leaves the queue's own"},
		at: func(q *SQS) any { return &q.VisibilityTimeout }, def: 30 * time.Second, dur: durRange{max: MaxSQSVisibility}},
	{Field: Field{Name: "rawMessageDelivery", Kind: KindBoolean, Doc: "SNS raw message delivery (pubSub)"},
		at: func(q *SQS) any { return &q.RawMessageDelivery }, def: true},
	{Field: Field{Name: "contentBasedDeduplication", Kind: KindBoolean, Doc: "content-based deduplication (fifo)"},
		at: func(q *SQS) any { return &q.ContentBasedDeduplication }, def: true},
	{Field: Field{Name: "messageRetentionPeriod", Kind: KindDuration, Doc: "how long the queue keeps a message"},
		at: func(q *SQS) any { return &q.MessageRetentionPeriod }, def: 96 * time.Hour, dur: durRange{min: time.Minute, max: 336 * time.Hour}},
	{Field: Field{Name: "redrivePolicy", Kind: KindBlock, Doc: "SQS's native dead-letter redrive"}},
	{Field: Field{Name: "tags", Kind: KindMap, Doc: "queue tags"},
		at: func(q *SQS) any { return &q.Tags }},
}

var redrivePolicyTable = []field[RedrivePolicy]{
	{Field: Field{Name: "deadLetterQueue", Kind: KindText, Required: true, Doc: "the dead-letter queue's name"},
		at: func(p *RedrivePolicy) any { return &p.DeadLetterQueue }, nonEmpty: true},
	{Field: Field{Name: "maxReceiveCount", Kind: KindInteger, Required: true, Doc: "receives before SQS moves a message to the dead-letter queue"},
		at: func(p *RedrivePolicy) any { return &p.MaxReceiveCount }, lo: 1, hi: 1000},
}

var gcpTable = []field[GCP]{
	{Field: Field{Name: "projectId", Kind: KindText, Default: "connections.gcp.projectId", Doc: "the subscription's project"},
		at: func(g *GCP) any { return &g.ProjectID }},
	{Field: Field{Name: "mode", Kind: KindEnum, Enum: gcpModes, Doc: "pull (unary pull) or stream (streaming pull)"},
		at: func(g *GCP) any { return &g.Mode }, def: GCPModeStream},
	{Field: Field{Name: "ackDeadline", Kind: KindDuration, Doc: "the subscription's ack deadline"},
		at: func(g *GCP) any { return &g.AckDeadline }, def: 30 * time.Second},
	{Field: Field{Name: "enableMessageOrdering", Kind: KindBoolean, Doc: "order by ordering key"},
		at: func(g *GCP) any { return &g.EnableMessageOrdering }},
	{Field: Field{Name: "maxExtension", Kind: KindDuration, Doc: "the stream client's cap of lease extension"},
		at: func(g *GCP) any { return &g.MaxExtension }, def: 60 * time.Minute},
	{Field: Field{Name: "maxRequeueDelay", Kind: KindDuration, Doc: "the retry policy's maximum backoff"},
		at: func(g *GCP) any { return &g.MaxRequeueDelay }, def: 600 * time.Second},
	{Field: Field{Name: "subscriberMember", Kind: KindText, Doc: "an IAM member granted subscriber"},
		at: func(g *GCP) any { return &g.SubscriberMember }},
	{Field: Field{Name: "deadLetterPolicy", Kind: KindBlock, Doc: "Pub/Sub's native dead-letter policy"}},
	{Field: Field{Name: "labels", Kind: KindMap, Doc: "subscription labels"},
		at: func(g *GCP) any { return &g.Labels }},
}

var deadLetterPolicyTable = []field[DeadLetterPolicy]{
	{Field: Field{Name: "topic", Kind: KindText, Required: true, Doc: "the dead-letter topic"},
		at: func(p *DeadLetterPolicy) any { return &p.Topic }, nonEmpty: true, missing: "; the dead-letter topic"},
	{Field: Field{Name: "subscription", Kind: KindText, Doc: "the dead-letter topic's subscription"},
		at: func(p *DeadLetterPolicy) any { return &p.Subscription }},
	{Field: Field{Name: "maxDeliveryAttempts", Kind: KindInteger,
		Doc: "5..100, or 0 for Pub/Sub's default of 5"},
		at: func(p *DeadLetterPolicy) any { return &p.MaxDeliveryAttempts }, def: 10, lo: 0, hi: 100,
		// Pub/Sub takes 0 as its default, 5: store the effective value so
		// lint and the channel maker see what the service applies.
		after: func(d *decoder, e entry, p *DeadLetterPolicy) {
			switch {
			case p.MaxDeliveryAttempts == 0:
				p.MaxDeliveryAttempts = GCPDefaultMaxDeliveryAttempts
			case p.MaxDeliveryAttempts < GCPDefaultMaxDeliveryAttempts:
				d.rangeErr(e, strconv.Itoa(p.MaxDeliveryAttempts), "0 (the service default, 5) or 5..100")
			}
		}},
	{Field: Field{Name: "ackDeadline", Kind: KindDuration, Doc: "the dead-letter subscription's ack deadline"},
		at: func(p *DeadLetterPolicy) any { return &p.AckDeadline }, def: 60 * time.Second},
	{Field: Field{Name: "publisherMember", Kind: KindText, Doc: "an IAM member granted publisher on the dead-letter topic"},
		at: func(p *DeadLetterPolicy) any { return &p.PublisherMember }},
}

var rocketmqTable = []field[RocketMQ]{
	{Field: Field{Name: "consumerGroup", Kind: KindText, Required: true, Doc: "the consumer group"},
		at: func(r *RocketMQ) any { return &r.ConsumerGroup }, nonEmpty: true},
	{Field: Field{Name: "invisibleDuration", Kind: KindDuration, Doc: "how long a received message stays hidden"},
		at: func(r *RocketMQ) any { return &r.InvisibleDuration }, def: 30 * time.Second, dur: durRange{positive: true}},
	{Field: Field{Name: "tag", Kind: KindText, Doc: "the filter expression; empty is *"},
		at: func(r *RocketMQ) any { return &r.Tag }, def: "*",
		after: func(_ *decoder, _ entry, r *RocketMQ) {
			if r.Tag == "" {
				r.Tag = "*"
			}
		}},
	{Field: Field{Name: "maxDeliveryAttempts", Kind: KindInteger, Doc: "the consumer group's maximum delivery attempts on the broker"},
		at: func(r *RocketMQ) any { return &r.MaxDeliveryAttempts }, def: 16, lo: 1, hi: math.MaxInt},
}

var memoryTable = []field[Memory]{
	{Field: Field{Name: "seed", Kind: KindText, Doc: "a JSON-lines file of messages loaded at start, relative to the file"},
		at:    func(m *Memory) any { return &m.Seed },
		after: func(d *decoder, _ entry, m *Memory) { m.Seed = d.resolvePath(m.Seed) }},
	{Field: Field{Name: "output", Kind: KindText, Doc: "where every queue's remaining messages are written at stop, relative to the file"},
		at:    func(m *Memory) any { return &m.Output },
		after: func(d *decoder, _ entry, m *Memory) { m.Output = d.resolvePath(m.Output) }},
	{Field: Field{Name: "stopWhenEmpty", Kind: KindBoolean, Doc: "stop consume when every queue is empty"},
		at: func(m *Memory) any { return &m.StopWhenEmpty }},
	{Field: Field{Name: "visibilityTimeout", Kind: KindDuration, Doc: "how long a received message stays hidden"},
		at: func(m *Memory) any { return &m.VisibilityTimeout }, def: 30 * time.Second, dur: durRange{positive: true}},
}

var (
	blockFields = map[Transport][]string{
		TransportSQS:      names(sqsTable),
		TransportGCP:      names(gcpTable),
		TransportRocketMQ: names(rocketmqTable),
		TransportMemory:   names(memoryTable),
	}
	channelTypes = schemaEnum("$defs", "sqs", "properties", "channelType")
	queueTypes   = schemaEnum("$defs", "sqs", "properties", "queueType")
	gcpModes     = schemaEnum("$defs", "gcp", "properties", "mode")
)

// transportBlocks checks that only the chosen transport's block is present,
// decodes it (or its defaults) and applies transport-specific limits.
func (d *decoder) transportBlocks(s *Subscription, by []entry) {
	if s.Transport == "" {
		return
	}
	for _, t := range transports {
		e, ok := findEntry(by, t)
		if ok && Transport(t) != s.Transport {
			d.errorf(e.keyN, e.path, "a %s block does not match transport %s; remove it or use a %s block", t, s.Transport, s.Transport)
		}
	}
	e, present := findEntry(by, string(s.Transport))
	var ents []entry
	if present {
		ents = d.entriesOf(e, blockFields[s.Transport])
	}
	switch s.Transport {
	case TransportSQS:
		s.SQS = d.sqs(ents)
		if e, ok := findEntry(by, "timeOut"); ok && s.TimeOut > MaxSQSTimeOut {
			d.rangeErr(e, FormatDuration(s.TimeOut), "0s.."+FormatDuration(MaxSQSTimeOut)+" for sqs (the long-poll maximum)")
		}
		if e, ok := findEntry(by, "requeueDelay"); ok && s.RequeueDelay > MaxSQSVisibility {
			d.rangeErr(e, FormatDuration(s.RequeueDelay), "0s.."+FormatDuration(MaxSQSVisibility)+" for sqs (the visibility timeout maximum)")
		}
	case TransportGCP:
		s.GCP = d.gcp(ents)
	case TransportRocketMQ:
		s.RocketMQ = d.rocketmq(ents)
		if s.RocketMQ.ConsumerGroup == "" {
			at, field := s.Pos("transport"), s.Path()+".rocketmq.consumerGroup"
			if present {
				at = d.posOf(e.keyN)
			}
			if !s.Set("rocketmq.consumerGroup") {
				d.errAt(at, field, "required field is missing; a rocketmq subscription needs its consumer group")
			}
		}
	case TransportMemory:
		s.Memory = d.memory(ents)
	}
}

func (d *decoder) sqs(ents []entry) *SQS {
	q := &SQS{}
	setDefaults(q, sqsTable)
	decodeFields(d, ents, q, sqsTable, func(e entry) { // redrivePolicy
		rp := &RedrivePolicy{}
		got := d.entriesOf(e, names(redrivePolicyTable))
		decodeFields(d, got, rp, redrivePolicyTable, nil)
		requireFields(d, redrivePolicyTable, got, e)
		q.RedrivePolicy = rp
	})
	return q
}

func (d *decoder) gcp(ents []entry) *GCP {
	g := &GCP{}
	setDefaults(g, gcpTable)
	decodeFields(d, ents, g, gcpTable, func(e entry) { // deadLetterPolicy
		p := &DeadLetterPolicy{}
		setDefaults(p, deadLetterPolicyTable)
		got := d.entriesOf(e, names(deadLetterPolicyTable))
		decodeFields(d, got, p, deadLetterPolicyTable, nil)
		requireFields(d, deadLetterPolicyTable, got, e)
		g.DeadLetterPolicy = p
	})
	return g
}

func (d *decoder) rocketmq(ents []entry) *RocketMQ {
	r := &RocketMQ{}
	setDefaults(r, rocketmqTable)
	decodeFields(d, ents, r, rocketmqTable, nil)
	return r
}

func (d *decoder) memory(ents []entry) *Memory {
	m := &Memory{}
	setDefaults(m, memoryTable)
	decodeFields(d, ents, m, memoryTable, nil)
	return m
}

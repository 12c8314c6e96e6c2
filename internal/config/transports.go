package config

import (
	"math"
	"strconv"
	"time"
)

var blockFields = map[Transport][]string{
	TransportSQS: {"channelType", "queueType", "visibilityTimeout", "rawMessageDelivery", "contentBasedDeduplication",
		"messageRetentionPeriod", "redrivePolicy", "tags"},
	TransportGCP: {"projectId", "mode", "ackDeadline", "enableMessageOrdering", "maxExtension", "maxRequeueDelay",
		"subscriberMember", "deadLetterPolicy", "labels"},
	TransportRocketMQ: {"consumerGroup", "invisibleDuration", "tag", "maxDeliveryAttempts"},
	TransportMemory:   {"seed", "output", "stopWhenEmpty", "visibilityTimeout"},
}

var (
	channelTypes = schemaEnum("$defs", "sqs", "properties", "channelType")
	queueTypes   = schemaEnum("$defs", "sqs", "properties", "queueType")
	gcpModes     = schemaEnum("$defs", "gcp", "properties", "mode")
)

func (d *decoder) sqs(ents []entry) *SQS {
	q := &SQS{
		ChannelType: ChannelPointToPoint, QueueType: QueueStandard, VisibilityTimeout: 30 * time.Second,
		RawMessageDelivery: true, ContentBasedDeduplication: true, MessageRetentionPeriod: 96 * time.Hour,
	}
	for _, e := range ents {
		switch e.key {
		case "channelType":
			d.enum(e, &q.ChannelType, "channelType", channelTypes)
		case "queueType":
			d.enum(e, &q.QueueType, "queueType", queueTypes)
		case "visibilityTimeout":
			d.dur(e, &q.VisibilityTimeout, durRange{max: MaxSQSVisibility})
		case "rawMessageDelivery":
			d.boolean(e, &q.RawMessageDelivery)
		case "contentBasedDeduplication":
			d.boolean(e, &q.ContentBasedDeduplication)
		case "messageRetentionPeriod":
			d.dur(e, &q.MessageRetentionPeriod, durRange{min: time.Minute, max: 336 * time.Hour})
		case "redrivePolicy":
			rp := &RedrivePolicy{}
			got := map[string]bool{}
			for _, e := range d.entriesOf(e, []string{"deadLetterQueue", "maxReceiveCount"}) {
				got[e.key] = true
				switch e.key {
				case "deadLetterQueue":
					if d.str(e, &rp.DeadLetterQueue) && rp.DeadLetterQueue == "" {
						d.errorf(e.val, e.path, "must not be empty")
					}
				case "maxReceiveCount":
					d.intIn(e, &rp.MaxReceiveCount, 1, 1000)
				}
			}
			for _, k := range []string{"deadLetterQueue", "maxReceiveCount"} {
				if !got[k] {
					d.errorf(e.keyN, e.path+"."+k, "required field is missing")
				}
			}
			q.RedrivePolicy = rp
		case "tags":
			q.Tags = d.strMap(e)
		}
	}
	return q
}

func (d *decoder) gcp(ents []entry) *GCP {
	g := &GCP{Mode: GCPModeStream, AckDeadline: 30 * time.Second, MaxExtension: 60 * time.Minute, MaxRequeueDelay: 600 * time.Second}
	for _, e := range ents {
		switch e.key {
		case "projectId":
			d.str(e, &g.ProjectID)
		case "mode":
			d.enum(e, &g.Mode, "mode", gcpModes)
		case "ackDeadline":
			d.dur(e, &g.AckDeadline, durRange{})
		case "enableMessageOrdering":
			d.boolean(e, &g.EnableMessageOrdering)
		case "maxExtension":
			d.dur(e, &g.MaxExtension, durRange{})
		case "maxRequeueDelay":
			d.dur(e, &g.MaxRequeueDelay, durRange{})
		case "subscriberMember":
			d.str(e, &g.SubscriberMember)
		case "deadLetterPolicy":
			p := &DeadLetterPolicy{MaxDeliveryAttempts: 10, AckDeadline: 60 * time.Second}
			hasTopic := false
			for _, e := range d.entriesOf(e, []string{"topic", "subscription", "maxDeliveryAttempts", "ackDeadline", "publisherMember"}) {
				switch e.key {
				case "topic":
					hasTopic = true
					if d.str(e, &p.Topic) && p.Topic == "" {
						d.errorf(e.val, e.path, "must not be empty")
					}
				case "subscription":
					d.str(e, &p.Subscription)
				case "maxDeliveryAttempts":
					// Pub/Sub takes 0 as its default, 5 (issue 14): store
					// the effective value so lint and the channel maker
					// see what the service applies.
					if d.intIn(e, &p.MaxDeliveryAttempts, 0, 100) {
						switch {
						case p.MaxDeliveryAttempts == 0:
							p.MaxDeliveryAttempts = GCPDefaultMaxDeliveryAttempts
						case p.MaxDeliveryAttempts < GCPDefaultMaxDeliveryAttempts:
							d.rangeErr(e, strconv.Itoa(p.MaxDeliveryAttempts), "0 (the service default, 5) or 5..100")
						}
					}
				case "ackDeadline":
					d.dur(e, &p.AckDeadline, durRange{})
				case "publisherMember":
					d.str(e, &p.PublisherMember)
				}
			}
			if !hasTopic {
				d.errorf(e.keyN, e.path+".topic", "required field is missing; the dead-letter topic")
			}
			g.DeadLetterPolicy = p
		case "labels":
			g.Labels = d.strMap(e)
		}
	}
	return g
}

func (d *decoder) rocketmq(ents []entry) *RocketMQ {
	r := &RocketMQ{InvisibleDuration: 30 * time.Second, Tag: "*", MaxDeliveryAttempts: 16}
	for _, e := range ents {
		switch e.key {
		case "consumerGroup":
			if d.str(e, &r.ConsumerGroup) && r.ConsumerGroup == "" {
				d.errorf(e.val, e.path, "must not be empty")
			}
		case "invisibleDuration":
			d.dur(e, &r.InvisibleDuration, durRange{positive: true})
		case "tag":
			if d.str(e, &r.Tag) && r.Tag == "" {
				r.Tag = "*"
			}
		case "maxDeliveryAttempts":
			d.intIn(e, &r.MaxDeliveryAttempts, 1, math.MaxInt)
		}
	}
	return r
}

func (d *decoder) memory(ents []entry) *Memory {
	m := &Memory{VisibilityTimeout: 30 * time.Second}
	for _, e := range ents {
		switch e.key {
		case "seed":
			if d.str(e, &m.Seed) {
				m.Seed = d.resolvePath(m.Seed)
			}
		case "output":
			if d.str(e, &m.Output) {
				m.Output = d.resolvePath(m.Output)
			}
		case "stopWhenEmpty":
			d.boolean(e, &m.StopWhenEmpty)
		case "visibilityTimeout":
			d.dur(e, &m.VisibilityTimeout, durRange{positive: true})
		}
	}
	return m
}

// resolveCommand makes an exec command given as a relative path (one with a
// slash, like ./handler.sh) relative to the config file's directory, as

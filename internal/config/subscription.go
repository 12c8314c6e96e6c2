package config

import (
	"fmt"
	"math"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

func subscriptionPath(i int) string { return fmt.Sprintf("subscriptions[%d]", i) }

func (d *decoder) subscriptions(e *entry) {
	n, resolved := d.resolveOK(e.val, e.path)
	if !resolved {
		return
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		if isNil(n) || n.Type() == ast.NullType {
			d.errorf(e.keyN, e.path, "at least one subscription is required")
			return
		}
		d.errorf(n, e.path, "must be a list of subscriptions (- name: ...), got %s", kindOf(n))
		return
	}
	if len(seq.Values) == 0 {
		d.errorf(e.keyN, e.path, "at least one subscription is required")
		return
	}
	type first struct {
		line int
	}
	seen := map[string]first{}
	rocketReported := false
	for i, item := range seq.Values {
		s, nameNode := d.subscription(i, item)
		if s == nil {
			continue
		}
		if s.Name != "" {
			if f, dup := seen[s.Name]; dup {
				d.errorf(nameNode, s.Path()+".name", "duplicate subscription name %q; first defined at line %d", s.Name, f.line)
			} else {
				seen[s.Name] = first{line: d.posOf(nameNode).Line}
			}
		}
		if s.Transport == TransportRocketMQ && d.f.Connections.RocketMQ.Endpoint == "" && !rocketReported {
			rocketReported = true
			d.errAt(s.Pos("transport"), "connections.rocketmq.endpoint",
				"required field is missing; subscription %q uses transport rocketmq", s.Name)
		}
		if s.Transport == TransportGCP && s.GCP != nil && s.GCP.ProjectID == "" {
			s.GCP.ProjectID = d.f.Connections.GCP.ProjectID
			if s.GCP.ProjectID == "" {
				at := s.Pos("transport")
				if s.Set("gcp") {
					at = s.Pos("gcp")
				}
				d.errAt(at, s.Path()+".gcp.projectId",
					"required field is missing; set gcp.projectId here or connections.gcp.projectId")
			}
		}
		d.f.Subscriptions = append(d.f.Subscriptions, s)
	}
}

var subFields = []string{
	"name", "transport", "channelName", "routingKey", "messagePumpType", "bufferSize", "noOfPerformers",
	"timeOut", "requeueCount", "requeueDelay", "unacceptableMessageLimit", "unacceptableMessageLimitWindow",
	"emptyChannelDelay", "channelFailureDelay", "maxChannelFailureDelay", "callTimeout", "stallAfter", "drainTimeout", "maxLeaseExtension", "makeChannels", "deadLetterRoutingKey",
	"invalidMessageRoutingKey", "handler", "sqs", "gcp", "rocketmq", "memory",
}

var (
	pumpTypes    = schemaEnum("$defs", "subscription", "properties", "messagePumpType")
	makeChannels = schemaEnum("$defs", "subscription", "properties", "makeChannels")
)

// subscription decodes one item of subscriptions; it returns nil when the
// item is not a mapping. nameNode is the name's value node (for duplicate
// reports).
func (d *decoder) subscription(i int, item ast.Node) (*Subscription, ast.Node) {
	path := subscriptionPath(i)
	s := &Subscription{
		Index:                  i,
		MessagePumpType:        Proactor,
		BufferSize:             DefaultBufferSize,
		NoOfPerformers:         DefaultNoOfPerformers,
		RequeueCount:           DefaultRequeueCount,
		EmptyChannelDelay:      DefaultEmptyChannelDelay,
		ChannelFailureDelay:    DefaultChannelFailureDelay,
		MaxChannelFailureDelay: DefaultMaxChannelFailureDelay,
		CallTimeout:            DefaultCallTimeout,
		StallAfter:             DefaultStallAfter,
		DrainTimeout:           DefaultDrainTimeout,
		MaxLeaseExtension:      DefaultMaxLeaseExtension,
		MakeChannels:           MakeChannelsCreate,
		pos:                    map[string]Position{},
		written:                d.f.written,
	}
	d.sub, d.subBase = s, path+"."
	defer func() { d.sub, d.subBase = nil, "" }()
	resolved, ok := d.resolveOK(item, path)
	if !ok {
		return nil, nil
	}
	s.self = d.posOf(resolved)
	d.f.pos[path] = s.self
	ents, ok := d.mapEntries(resolved, path, subFields)
	if !ok {
		return nil, nil
	}
	by := map[string]entry{}
	for _, e := range ents {
		by[e.key] = e
	}
	var nameNode ast.Node
	if e, ok := by["name"]; ok {
		nameNode = d.resolve(e.val, e.path)
		if d.str(e, &s.Name) && s.Name == "" {
			d.errorf(e.val, e.path, "must not be empty")
		}
	} else {
		d.errAt(s.self, path+".name", "required field is missing")
	}
	if e, ok := by["transport"]; ok {
		var t string
		if d.enum(e, &t, "transport", transports) {
			s.Transport = Transport(t)
		}
	} else {
		d.errAt(s.self, path+".transport", "required field is missing; valid values are %s", strings.Join(transports, ", "))
	}
	for _, e := range ents {
		switch e.key {
		case "channelName":
			d.str(e, &s.ChannelName)
		case "routingKey":
			d.str(e, &s.RoutingKey)
		case "messagePumpType":
			var v string
			if d.enum(e, &v, "messagePumpType", pumpTypes) {
				s.MessagePumpType = PumpType(v)
			}
		case "bufferSize":
			d.intIn(e, &s.BufferSize, 1, MaxBufferSize)
		case "noOfPerformers":
			d.intIn(e, &s.NoOfPerformers, 1, MaxNoOfPerformers)
		case "timeOut":
			s.TimeOutSet = d.dur(e, &s.TimeOut, durRange{})
		case "requeueCount":
			d.intIn(e, &s.RequeueCount, math.MinInt, math.MaxInt)
		case "requeueDelay":
			d.dur(e, &s.RequeueDelay, durRange{})
		case "unacceptableMessageLimit":
			d.intIn(e, &s.UnacceptableMessageLimit, 0, math.MaxInt)
		case "unacceptableMessageLimitWindow":
			d.dur(e, &s.UnacceptableMessageLimitWindow, durRange{})
		case "emptyChannelDelay":
			d.dur(e, &s.EmptyChannelDelay, durRange{})
		case "channelFailureDelay":
			d.dur(e, &s.ChannelFailureDelay, durRange{})
		case "maxChannelFailureDelay":
			d.dur(e, &s.MaxChannelFailureDelay, durRange{})
		case "callTimeout":
			d.dur(e, &s.CallTimeout, durRange{})
		case "stallAfter":
			d.dur(e, &s.StallAfter, durRange{})
		case "drainTimeout":
			d.dur(e, &s.DrainTimeout, durRange{})
		case "maxLeaseExtension":
			d.dur(e, &s.MaxLeaseExtension, durRange{})
		case "makeChannels":
			var v string
			if d.enum(e, &v, "makeChannels", makeChannels) {
				s.MakeChannels = MakeChannels(v)
			}
		case "deadLetterRoutingKey":
			d.str(e, &s.DeadLetterRoutingKey)
		case "invalidMessageRoutingKey":
			d.str(e, &s.InvalidMessageRoutingKey)
		}
	}
	if e, ok := by["handler"]; ok {
		d.handler(e, &s.Handler)
	} else {
		d.errAt(s.self, path+".handler", "required field is missing; a subscription needs a handler (type: builtin, exec or http)")
	}
	if s.ChannelName == "" {
		s.ChannelName = s.Name
	}
	if s.RoutingKey == "" {
		s.RoutingKey = s.ChannelName
	}
	if !s.TimeOutSet {
		s.TimeOut = DefaultTimeOut(s.Transport)
	}
	d.transportBlocks(s, by)
	d.checkNames(s)
	return s, nameNode
}

// transportBlocks checks that only the chosen transport's block is present,
// decodes it (or its defaults) and applies transport-specific limits.
func (d *decoder) transportBlocks(s *Subscription, by map[string]entry) {
	if s.Transport == "" {
		return
	}
	for _, t := range transports {
		e, ok := by[t]
		if ok && Transport(t) != s.Transport {
			d.errorf(e.keyN, e.path, "a %s block does not match transport %s; remove it or use a %s block", t, s.Transport, s.Transport)
		}
	}
	e, present := by[string(s.Transport)]
	var ents []entry
	if present {
		ents = d.entriesOf(e, blockFields[s.Transport])
	}
	switch s.Transport {
	case TransportSQS:
		s.SQS = d.sqs(ents)
		if e, ok := by["timeOut"]; ok && s.TimeOut > MaxSQSTimeOut {
			d.rangeErr(e, FormatDuration(s.TimeOut), "0s.."+FormatDuration(MaxSQSTimeOut)+" for sqs (the long-poll maximum)")
		}
		if e, ok := by["requeueDelay"]; ok && s.RequeueDelay > MaxSQSVisibility {
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

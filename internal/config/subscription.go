package config

import (
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	yaml "go.yaml.in/yaml/v3"
)

func subscriptionPath(i int) string { return "subscriptions[" + strconv.Itoa(i) + "]" }

func (d *decoder) subscriptions(e *entry) {
	n, resolved := d.resolveOK(e.val, e.path)
	if !resolved {
		return
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		if n == nil || typeOf(n) == ast.NullType {
			d.errorf(e.keyN, e.path, "at least one subscription is required")
			return
		}
		d.errorf(n, e.path, "must be a list of subscriptions (- name: ...), got %s", kindOf(n))
		return
	}
	if len(n.Content) == 0 {
		d.errorf(e.keyN, e.path, "at least one subscription is required")
		return
	}
	type first struct {
		line int
	}
	seen := map[string]first{}
	rocketReported := false
	for i, item := range n.Content {
		if d.alias.left < 0 {
			// Aliases spent MaxAliasNodes (reported where): the rest of
			// the list is not decoded.
			break
		}
		s, nameNode := d.subscription(i, item)
		if s == nil {
			continue
		}
		if s.Name != "" {
			if f, dup := seen[s.Name]; dup {
				d.errorf(nameNode, s.Path()+".name", "duplicate subscription name %q; first defined at line %d", d.writtenAt(s.Path()+".name", s.Name), f.line)
			} else {
				seen[s.Name] = first{line: d.posOf(nameNode).Line}
			}
		}
		if s.Transport == TransportRocketMQ && d.f.Connections.RocketMQ.Endpoint == "" && !rocketReported {
			rocketReported = true
			d.errAt(s.Pos("transport"), "connections.rocketmq.endpoint",
				"required field is missing; subscription %q uses transport rocketmq", d.writtenAt(s.Path()+".name", s.Name))
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

// subscriptionTable is every field of a subscription, in the order of
// docs/configuration.md's table. name, transport and handler are read by
// subscription itself, first and last, as their absence has its own
// message; the transport blocks are read by transportBlocks.
var subscriptionTable = []field[Subscription]{
	{Field: Field{Name: "name", Kind: KindText, Required: true, Default: "(required)", PumpOption: "Subscription",
		Doc: "unique name; --subscription selects by it"},
		at: func(s *Subscription) any { return &s.Name }, nonEmpty: true},
	{Field: Field{Name: "transport", Kind: KindEnum, Required: true, Default: "(required)", Enum: transports,
		Doc: "the broker: sqs, gcp, rocketmq or memory"},
		at: func(s *Subscription) any { return (*string)(&s.Transport) }, missing: "; valid values are " + strings.Join(transports, ", ")},
	{Field: Field{Name: "channelName", Kind: KindText, Default: "name",
		Doc: "queue (SQS), subscription (Pub/Sub), topic read by the group (RocketMQ)"},
		at: func(s *Subscription) any { return &s.ChannelName }},
	{Field: Field{Name: "routingKey", Kind: KindText, Default: "channelName",
		Doc: "the topic messages are published to"},
		at: func(s *Subscription) any { return &s.RoutingKey }},
	{Field: Field{Name: "messagePumpType", Kind: KindEnum, Enum: pumpTypes, PumpOption: "Variant",
		Doc: "reactor (one message at a time per performer, in order) or proactor (receive ahead, concurrent)"},
		at: func(s *Subscription) any { return (*string)(&s.MessagePumpType) }, def: string(Proactor)},
	{Field: Field{Name: "bufferSize", Kind: KindInteger, PumpOption: "BufferSize",
		Doc: "messages per receive"},
		at: func(s *Subscription) any { return &s.BufferSize }, def: DefaultBufferSize, lo: 1, hi: MaxBufferSize},
	{Field: Field{Name: "noOfPerformers", Kind: KindInteger, PumpOption: "NoOfPerformers",
		Doc: "performers (Reactor) or receivers and workers (Proactor)"},
		at: func(s *Subscription) any { return &s.NoOfPerformers }, def: DefaultNoOfPerformers, lo: 1, hi: MaxNoOfPerformers},
	{Field: Field{Name: "timeOut", Kind: KindDuration, Default: "sqs 20s, gcp 1s, rocketmq 20s, memory 300ms", PumpOption: "TimeOut",
		Doc: "how long one receive waits (SQS long poll, at most 20s)"},
		at:    func(s *Subscription) any { return &s.TimeOut },
		after: func(_ *decoder, _ entry, s *Subscription) { s.TimeOutSet = true }},
	{Field: Field{Name: "requeueCount", Kind: KindInteger, PumpOption: "RequeueCount",
		Doc: "the redelivery budget; -1 = unlimited"},
		at: func(s *Subscription) any { return &s.RequeueCount }, def: DefaultRequeueCount, lo: math.MinInt, hi: math.MaxInt,
		// Every whole number is a budget (0 and below -1 reject on the
		// first deferral, as 1 does: lint's budget-zero warns).
		valid: "valid values are -1 (no limit) or the delivery count at which a deferred message is rejected, such as 3 (any whole number that fits in 64 bits)"},
	{Field: Field{Name: "requeueDelay", Kind: KindDuration, Default: "0s", PumpOption: "RequeueDelay",
		Doc: "delay of a requeue (SQS at most 12h)"},
		at: func(s *Subscription) any { return &s.RequeueDelay }},
	{Field: Field{Name: "unacceptableMessageLimit", Kind: KindInteger, Default: "0", PumpOption: "UnacceptableMessageLimit",
		Doc: "stop after this many rejections of any kind: a handler's reject or unacceptable, a message that could not be decoded, a spent redelivery budget (0 = never)"},
		at: func(s *Subscription) any { return &s.UnacceptableMessageLimit }, lo: 0, hi: math.MaxInt},
	{Field: Field{Name: "unacceptableMessageLimitWindow", Kind: KindDuration, Default: "0s", PumpOption: "UnacceptableMessageLimitWindow",
		Doc: "the count restarts when older than this (0 = never)"},
		at: func(s *Subscription) any { return &s.UnacceptableMessageLimitWindow }},
	{Field: Field{Name: "emptyChannelDelay", Kind: KindDuration, PumpOption: "EmptyChannelDelay",
		Doc: "pause after an empty receive"},
		at: func(s *Subscription) any { return &s.EmptyChannelDelay }, def: DefaultEmptyChannelDelay},
	{Field: Field{Name: "channelFailureDelay", Kind: KindDuration, PumpOption: "ChannelFailureDelay",
		Doc: "pause after a failed receive; doubled (with jitter) after each further failure in a row"},
		at: func(s *Subscription) any { return &s.ChannelFailureDelay }, def: DefaultChannelFailureDelay},
	{Field: Field{Name: "maxChannelFailureDelay", Kind: KindDuration, PumpOption: "MaxChannelFailureDelay",
		Doc: "cap of the channel-failure back-off"},
		at: func(s *Subscription) any { return &s.MaxChannelFailureDelay }, def: DefaultMaxChannelFailureDelay},
	{Field: Field{Name: "callTimeout", Kind: KindDuration, PumpOption: "CallTimeout",
		Doc: "deadline of each acknowledge, requeue and rejection call"},
		at: func(s *Subscription) any { return &s.CallTimeout }, def: DefaultCallTimeout},
	{Field: Field{Name: "stallAfter", Kind: KindDuration, PumpOption: "StallAfter",
		Doc: "how long broker calls may fail, with no success between, before /readyz answers 503"},
		at: func(s *Subscription) any { return &s.StallAfter }, def: DefaultStallAfter},
	{Field: Field{Name: "drainTimeout", Kind: KindDuration, PumpOption: "DrainTimeout",
		Doc: "how long in-flight handlers get on SIGINT, SIGTERM or SIGHUP (more than 0s)"},
		at: func(s *Subscription) any { return &s.DrainTimeout }, def: DefaultDrainTimeout, dur: durRange{positive: true}},
	{Field: Field{Name: "maxLeaseExtension", Kind: KindDuration, PumpOption: "MaxLeaseExtension",
		Doc: "how long past its first lease the pump keeps extending a held message's lease; 0s turns extension off"},
		at: func(s *Subscription) any { return &s.MaxLeaseExtension }, def: DefaultMaxLeaseExtension},
	{Field: Field{Name: "makeChannels", Kind: KindEnum, Enum: makeChannels,
		Doc: "missing queue, topic or subscription: create, validate or assume"},
		at: func(s *Subscription) any { return (*string)(&s.MakeChannels) }, def: string(MakeChannelsCreate)},
	{Field: Field{Name: "deadLetterRoutingKey", Kind: KindText, Default: "none",
		Doc: "where DeliveryError (and budget-exhausted) rejections go"},
		at: func(s *Subscription) any { return &s.DeadLetterRoutingKey }},
	{Field: Field{Name: "invalidMessageRoutingKey", Kind: KindText, Default: "none",
		Doc: "where Unacceptable rejections go (falls back to the dead-letter queue)"},
		at: func(s *Subscription) any { return &s.InvalidMessageRoutingKey }},
	{Field: Field{Name: "handler", Kind: KindBlock, Required: true, Default: "(required)",
		Doc: "the code run for each message (docs/handlers.md)"},
		missing: "; a subscription needs a handler (type: builtin, exec or http)"},
	{Field: Field{Name: "sqs", Kind: KindBlock, Doc: "SQS/SNS settings (transport sqs)"}},
	{Field: Field{Name: "gcp", Kind: KindBlock, Doc: "Google Cloud Pub/Sub settings (transport gcp)"}},
	{Field: Field{Name: "rocketmq", Kind: KindBlock, Doc: "RocketMQ 5 settings (transport rocketmq)"}},
	{Field: Field{Name: "memory", Kind: KindBlock, Doc: "in-memory transport settings (transport memory)"}},
}

var (
	subFields    = names(subscriptionTable)
	pumpTypes    = schemaEnum("$defs", "subscription", "properties", "messagePumpType")
	makeChannels = schemaEnum("$defs", "subscription", "properties", "makeChannels")
)

// subscriptionField returns the subscription field named key; it panics
// for a name the table does not hold, a defect of this package.
func subscriptionField(key string) *field[Subscription] {
	f := lookup(subscriptionTable, key)
	if f == nil {
		panic("config: no subscription field " + key)
	}
	return f
}

// subPosHint is the room a subscription's position table starts with:
// about the keys a subscription sets (the generated benchmark file's set
// 14 to 18), so that most tables never grow; a larger hint cost more bytes
// than the growth it saved.
const subPosHint = 16

// subscription decodes one item of subscriptions; it returns nil when the
// item is not a mapping. nameNode is the name's value node (for duplicate
// reports).
func (d *decoder) subscription(i int, item *yaml.Node) (*Subscription, *yaml.Node) {
	path := subscriptionPath(i)
	s := &Subscription{
		Index: i,
		pos:   make(map[string]keyPos, subPosHint),
	}
	setDefaults(s, subscriptionTable)
	d.sub, d.subBase = s, path+"."
	defer func() { d.sub, d.subBase = nil, "" }()
	resolved, ok := d.resolveOK(item, path)
	if !ok {
		return nil, nil
	}
	s.self = d.posOf(resolved)
	ents, ok := d.mapEntries(resolved, path, subFields)
	if !ok {
		return nil, nil
	}
	var nameNode *yaml.Node
	for _, key := range []string{"name", "transport"} {
		f := subscriptionField(key)
		if e, ok := findEntry(ents, key); ok {
			if key == "name" {
				nameNode = d.resolve(e.val, e.path)
			}
			f.read(d, e, s)
		} else {
			f.missingAt(d, s.self, path+"."+key)
		}
	}
	for _, e := range ents {
		if f := subscriptionField(e.key); e.key != "name" && e.key != "transport" && f.at != nil {
			f.read(d, e, s)
		}
	}
	if e, ok := findEntry(ents, "handler"); ok {
		d.handler(e, &s.Handler)
	} else {
		subscriptionField("handler").missingAt(d, s.self, path+".handler")
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
	d.transportBlocks(s, ents)
	d.checkNames(s)
	return s, nameNode
}

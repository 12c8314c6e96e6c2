package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/brightergo/brighter/internal/redact"
)

// Load reads the subscriptions file at path and returns it parsed, defaulted
// and validated (see Parse). Reading "-" as standard input is the caller's
// business: read it and call Parse. env looks up environment variables for
// ${VAR} expansion; pass os.LookupEnv in production (nil means
// os.LookupEnv).
//
// Errors: a read failure is returned wrapped; every problem of the file's
// content is returned together as Errors (file:line:column, field, message).
func Load(path string, env func(string) (string, bool)) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read subscriptions file: %w", err)
	}
	return Parse(path, data, env)
}

// Parse decodes a subscriptions file held in data; name is the file name used
// in positions and errors, and its directory is the base of relative memory
// seed and output paths. ${VAR} and ${VAR:-default} in scalar values are
// expanded with env before the value is typed (so `bufferSize: ${N}` works);
// nil env means os.LookupEnv. Defaults are applied (reference §9; timeOut by
// transport, see DefaultTimeOut) and the block of the chosen transport is
// always non-nil.
//
// On any problem Parse returns a nil *File and an Errors holding every
// problem found, ordered by position. It never panics.
func Parse(name string, data []byte, env func(string) (string, bool)) (*File, error) {
	if env == nil {
		env = os.LookupEnv
	}
	d := &decoder{
		name:    name,
		dir:     filepath.Dir(name),
		env:     env,
		f:       &File{Path: name, pos: map[string]Position{}, written: asWritten{}},
		anchors: map[string]ast.Node{},
		budget:  maxAliasResolutions,
	}
	d.decode(data)
	if len(d.errs) > 0 {
		sortErrors(d.errs)
		if n := len(d.errs); n > MaxErrors {
			// A hostile file (10,000 aliases of one subscription) must not
			// become a 10,000-line report.
			rest := d.errs[MaxErrors]
			d.errs = append(d.errs[:MaxErrors:MaxErrors], &Error{File: rest.File, Line: rest.Line, Column: rest.Column,
				Msg: fmt.Sprintf("%d more problems from here on are not listed", n-MaxErrors)})
		}
		return nil, d.errs
	}
	return d.f, nil
}

// MaxErrors is how many problems Parse lists; one more Error says how many
// were left out.
const MaxErrors = 100

// maxAliasResolutions bounds how many aliases and merge keys one file may
// resolve, so a self-referencing anchor cannot loop.
const maxAliasResolutions = 10000

// decoder walks the YAML syntax tree of one file.
type decoder struct {
	name    string
	dir     string
	env     func(string) (string, bool)
	f       *File
	errs    Errors
	anchors map[string]ast.Node
	budget  int

	// sub is the subscription being decoded; keys under subBase are also
	// recorded in its position table.
	sub     *Subscription
	subBase string
}

// entry is one key: value pair of a mapping.
type entry struct {
	key  string
	keyN ast.Node
	val  ast.Node
	path string
}

func (d *decoder) decode(data []byte) {
	data = bytes.TrimPrefix(data, utf8BOM)
	f, err := parseYAML(data)
	if err != nil {
		var se *yaml.SyntaxError
		var le *limitError
		p := Position{File: d.name, Line: 1, Column: 1}
		if errors.As(err, &le) {
			p.Line, p.Column = le.line, le.col
			d.errAt(p, "", "%s", le.msg)
			return
		}
		msg := err.Error()
		if errors.As(err, &se) {
			msg = se.Message
			if se.Token != nil && se.Token.Position != nil {
				p.Line, p.Column = se.Token.Position.Line, se.Token.Position.Column
			}
		}
		d.errAt(p, "", "YAML syntax error: %s", goccyPos.ReplaceAllString(msg, "at line $1, column $2"))
		return
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && !isNil(doc.Body) {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		d.errAt(d.start(), "", "the file is empty; it needs a subscriptions list (see examples/)")
		return
	}
	if len(docs) > 1 {
		d.errorf(docs[1].Body, "", "a subscriptions file holds one YAML document; found %d", len(docs))
	}
	ast.Walk(anchorCollector(d.anchors), docs[0].Body)
	d.file(docs[0].Body)
}

// goccyPos matches the "at [LINE:COL]" the YAML parser writes in messages.
var goccyPos = regexp.MustCompile(`at \[(\d+):(\d+)\]`)

// parseYAML runs the YAML parser, turning a panic inside it into an error so
// no input can crash the caller.
// anchorCollector records every anchor of a document by name.
type anchorCollector map[string]ast.Node

func (a anchorCollector) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && !isNil(an.Name) && !isNil(an.Value) {
		if tk := an.Name.GetToken(); tk != nil {
			a[tk.Value] = an.Value
		}
	}
	return a
}

var (
	topFields      = []string{"connections", "subscriptions"}
	connFields     = []string{"aws", "gcp", "rocketmq"}
	awsFields      = []string{"region", "endpoint", "profile"}
	gcpConnFields  = []string{"projectId", "emulatorHost"}
	rocketConnFlds = []string{"endpoint", "namespace", "accessKey", "secretKey"}
)

func (d *decoder) file(body ast.Node) {
	ents, ok := d.mapEntries(body, "", topFields)
	if !ok {
		return
	}
	var subsEntry *entry
	for i := range ents {
		e := &ents[i]
		switch e.key {
		case "connections":
			d.connections(e)
		case "subscriptions":
			subsEntry = e
		}
	}
	if subsEntry == nil {
		d.errAt(d.posOf(body), "subscriptions", "required field is missing; list at least one subscription")
		return
	}
	d.subscriptions(subsEntry)
}

func (d *decoder) connections(e *entry) {
	ents, _ := d.mapEntries(e.val, e.path, connFields)
	c := &d.f.Connections
	for _, e := range ents {
		switch e.key {
		case "aws":
			for _, e := range d.entriesOf(e, awsFields) {
				switch e.key {
				case "region":
					d.str(e, &c.AWS.Region)
				case "endpoint":
					if d.str(e, &c.AWS.Endpoint) && c.AWS.Endpoint != "" {
						d.httpURL(e, c.AWS.Endpoint)
					}
				case "profile":
					d.str(e, &c.AWS.Profile)
				}
			}
		case "gcp":
			for _, e := range d.entriesOf(e, gcpConnFields) {
				switch e.key {
				case "projectId":
					d.str(e, &c.GCP.ProjectID)
				case "emulatorHost":
					if d.str(e, &c.GCP.EmulatorHost) && c.GCP.EmulatorHost != "" {
						d.hostPort(e, c.GCP.EmulatorHost, EmulatorHostShape, false)
					}
				}
			}
		case "rocketmq":
			for _, e := range d.entriesOf(e, rocketConnFlds) {
				switch e.key {
				case "endpoint":
					if d.str(e, &c.RocketMQ.Endpoint) && c.RocketMQ.Endpoint != "" {
						d.hostPort(e, c.RocketMQ.Endpoint, RocketMQEndpointShape, true)
					}
				case "namespace":
					d.str(e, &c.RocketMQ.Namespace)
				case "accessKey":
					d.str(e, &c.RocketMQ.AccessKey)
				case "secretKey":
					d.str(e, &c.RocketMQ.SecretKey)
				}
			}
		}
	}
}

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
// resolvePath does; a bare name (python3) is left for a PATH lookup.
func (d *decoder) resolveCommand(c string) string {
	if !strings.ContainsRune(c, '/') || filepath.IsAbs(c) {
		return c
	}
	p := filepath.Join(d.dir, c)
	if !strings.ContainsRune(p, '/') {
		p = "./" + p // still a path, never a PATH lookup
	}
	return p
}

// resolvePath makes a relative path relative to the config file's directory.
func (d *decoder) resolvePath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(d.dir, p)
}

var (
	handlerTypes  = schemaEnum("$defs", "handler", "properties", "type")
	handlerFields = map[HandlerType][]string{
		HandlerBuiltin: {"type", "name", "script"},
		HandlerExec:    {"type", "timeout", "command", "args", "env"},
		HandlerHTTP:    {"type", "timeout", "url", "headers", "tls"},
	}
	allHandlerFields = []string{"type", "timeout", "name", "script", "command", "args", "env", "url", "headers", "tls"}
	tlsFields        = []string{"caFile", "certFile", "keyFile", "insecureSkipVerify"}
)

func (d *decoder) handler(he entry, h *Handler) {
	h.Timeout = DefaultHandlerTimeout
	ents, ok := d.mapEntries(he.val, he.path, allHandlerFields)
	if !ok {
		return
	}
	by := map[string]entry{}
	for _, e := range ents {
		by[e.key] = e
	}
	te, ok := by["type"]
	if !ok {
		d.errorf(he.keyN, he.path+".type", "required field is missing; valid values are %s", strings.Join(handlerTypes, ", "))
		return
	}
	var t string
	if !d.enum(te, &t, "handler type", handlerTypes) {
		return
	}
	h.Type = HandlerType(t)
	allowed := handlerFields[h.Type]
	for _, e := range ents {
		if !slices.Contains(allowed, e.key) {
			d.errorf(e.keyN, e.path, "field %q does not belong to a %s handler; %s handlers take %s", e.key, t, t, strings.Join(allowed, ", "))
			continue
		}
		switch e.key {
		case "timeout":
			d.dur(e, &h.Timeout, durRange{positive: true})
		case "name":
			d.enum(e, &h.Name, "builtin handler", builtinNames)
		case "script":
			h.Script = d.script(e)
		case "command":
			if d.str(e, &h.Command) && h.Command == "" {
				d.errorf(e.val, e.path, "must not be empty")
			}
			h.Command = d.resolveCommand(h.Command)
		case "args":
			h.Args = d.strList(e)
		case "env":
			h.Env = d.strMap(e)
		case "url":
			if d.str(e, &h.URL) {
				d.httpURL(e, h.URL)
			}
		case "headers":
			h.Headers = d.strMap(e)
		case "tls":
			h.TLS = &TLS{}
			for _, e := range d.entriesOf(e, tlsFields) {
				switch e.key {
				case "caFile":
					d.str(e, &h.TLS.CAFile)
					h.TLS.CAFile = d.resolvePath(h.TLS.CAFile)
				case "certFile":
					d.str(e, &h.TLS.CertFile)
					h.TLS.CertFile = d.resolvePath(h.TLS.CertFile)
				case "keyFile":
					d.str(e, &h.TLS.KeyFile)
					h.TLS.KeyFile = d.resolvePath(h.TLS.KeyFile)
				case "insecureSkipVerify":
					d.boolean(e, &h.TLS.InsecureSkipVerify)
				}
			}
			if (h.TLS.CertFile == "") != (h.TLS.KeyFile == "") {
				d.errorf(e.keyN, e.path, "certFile and keyFile go together; set both or neither")
			}
		}
	}
	switch h.Type {
	case HandlerBuiltin:
		_, hasName := by["name"]
		se, hasScript := by["script"]
		switch {
		case hasName && hasScript:
			d.errorf(se.keyN, se.path, "name and script are mutually exclusive; set one")
		case !hasName && !hasScript:
			d.errorf(he.keyN, he.path+".name", "required field is missing; a builtin handler needs name (%s) or script", strings.Join(builtinNames, ", "))
		}
	case HandlerExec:
		if _, ok := by["command"]; !ok {
			d.errorf(he.keyN, he.path+".command", "required field is missing; an exec handler needs the command to run")
		}
	case HandlerHTTP:
		if _, ok := by["url"]; !ok {
			d.errorf(he.keyN, he.path+".url", "required field is missing; an http handler needs the url to POST to")
		}
	}
}

// script reads a builtin script: "defer,defer,ack" or a list of outcomes.
func (d *decoder) script(e entry) []string {
	var items []string
	if _, isList := d.resolve(e.val, e.path).(*ast.SequenceNode); isList {
		items = d.strList(e)
	} else {
		var s string
		if !d.str(e, &s) {
			return nil
		}
		if strings.TrimSpace(s) == "" {
			d.errorf(e.val, e.path, "must not be empty; list outcomes such as \"defer,defer,ack\"")
			return nil
		}
		items = strings.Split(s, ",")
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		it = strings.TrimSpace(it)
		if v, ok := matchEnum(it, builtinNames); ok {
			out = append(out, v)
			continue
		}
		d.errorf(e.val, e.path, "item %d %q is not a builtin outcome%s; valid values are %s", i+1, it, suggestion(it, builtinNames), strings.Join(builtinNames, ", "))
		return nil
	}
	return out
}

// ---- generic mapping and scalar readers ----

func (d *decoder) start() Position { return Position{File: d.name, Line: 1, Column: 1} }

// errAt records an error at p. Every string argument that came out of
// ${VAR} expansion is shown as written, and every %q of a string is cut at
// redact.MaxQuoted bytes with its length shown (issue 29: a 200 KB key gave
// a 400 KB error line); so is a field path longer than that.
func (d *decoder) errAt(p Position, field, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = redact.Quoted(d.asWritten(s))
		}
	}
	d.errs = append(d.errs, &Error{File: p.File, Line: p.Line, Column: p.Column, Field: redact.Cut(field), Msg: d.f.written.apply(fmt.Sprintf(format, args...))})
}

// asWritten returns the file's text for s when s came out of ${VAR}
// expansion, else s.
func (d *decoder) asWritten(s string) string {
	if raw, ok := d.f.written[s]; ok {
		return raw
	}
	return s
}

func (d *decoder) errorf(n ast.Node, field, format string, args ...any) {
	d.errAt(d.posOf(n), field, format, args...)
}

// isNil reports whether n is nil or a typed nil pointer.
func isNil(n ast.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// posOf returns where n starts: for a mapping, its first key.
func (d *decoder) posOf(n ast.Node) Position {
	for i := 0; i < 8 && !isNil(n); i++ {
		switch m := n.(type) {
		case *ast.MappingNode:
			if len(m.Values) > 0 && !isNil(m.Values[0]) {
				n = m.Values[0].Key
				continue
			}
		case *ast.MappingValueNode:
			n = m.Key
			continue
		case *ast.MappingKeyNode:
			if !isNil(m.Value) {
				n = m.Value
				continue
			}
		case *ast.LiteralNode:
			if m.Start == nil && !isNil(m.Value) {
				n = m.Value
				continue
			}
		}
		break
	}
	if isNil(n) {
		return d.start()
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return d.start()
	}
	return Position{File: d.name, Line: tk.Position.Line, Column: tk.Position.Column}
}

// resolve strips tags and anchors and follows aliases. An unknown alias or
// an exhausted alias budget is reported and yields nil.
func (d *decoder) resolve(n ast.Node, path string) ast.Node {
	r, _ := d.resolveOK(n, path)
	return r
}

// resolveOK is resolve that also says whether resolution failed (and was
// reported), as distinct from an absent value.
func (d *decoder) resolveOK(n ast.Node, path string) (ast.Node, bool) {
	for !isNil(n) {
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			name := ""
			if !isNil(v.Value) && v.Value.GetToken() != nil {
				name = v.Value.GetToken().Value
			}
			target, ok := d.anchors[name]
			if !ok {
				d.errorf(v, path, "alias *%s refers to no anchor", name)
				return nil, false
			}
			d.budget--
			if d.budget < 0 {
				d.errorf(v, path, "too many alias resolutions; is an anchor referring to itself?")
				return nil, false
			}
			n = target
		default:
			return n, true
		}
	}
	return nil, true
}

// entriesOf reads e's value as a mapping with the given fields; a null value
// is an empty mapping.
func (d *decoder) entriesOf(e entry, valid []string) []entry {
	ents, _ := d.mapEntries(e.val, e.path, valid)
	return ents
}

// mapEntries reads n as a mapping. Keys not in valid are reported (with the
// closest valid name) and dropped; valid == nil accepts any key. Merge keys
// (<<: *anchor) are expanded; explicit keys win over merged ones. A null n is
// an empty mapping. Every key's position is recorded under its path. ok is
// false when n is not a mapping.
func (d *decoder) mapEntries(n ast.Node, path string, valid []string) (ents []entry, ok bool) {
	n, ok = d.resolveOK(n, path)
	if !ok {
		return nil, false
	}
	if isNil(n) || n.Type() == ast.NullType {
		return nil, true
	}
	m, isMap := n.(*ast.MappingNode)
	if !isMap {
		d.errorf(n, path, "must be a mapping (key: value), got %s", kindOf(n))
		return nil, false
	}
	seen := map[string]bool{}
	var merged []entry
	for _, mv := range m.Values {
		if isNil(mv) {
			continue
		}
		key := d.resolve(mv.Key, path)
		if isNil(key) {
			continue
		}
		if key.Type() == ast.MergeKeyType {
			merged = append(merged, d.mergeEntries(mv.Value, path, valid)...)
			continue
		}
		name, isScalar := keyText(key)
		field := joinPath(path, name)
		if !isScalar {
			d.errorf(key, path, "a key must be a plain name, got %s", kindOf(key))
			continue
		}
		if valid != nil && !slices.Contains(valid, name) {
			d.unknownField(key, field, name, valid)
			continue
		}
		seen[name] = true
		d.record(field, d.posOf(key))
		ents = append(ents, entry{key: name, keyN: key, val: mv.Value, path: field})
	}
	for _, e := range merged {
		if !seen[e.key] {
			seen[e.key] = true
			d.record(e.path, d.posOf(e.keyN))
			ents = append(ents, e)
		}
	}
	return ents, true
}

// mergeEntries reads the value of a merge key: a mapping or a list of them.
func (d *decoder) mergeEntries(v ast.Node, path string, valid []string) []entry {
	d.budget--
	if d.budget < 0 {
		d.errorf(v, path, "too many merge keys; is an anchor referring to itself?")
		return nil
	}
	v = d.resolve(v, path)
	if seq, ok := v.(*ast.SequenceNode); ok {
		var out []entry
		for _, it := range seq.Values {
			out = append(out, d.mergeEntries(it, path, valid)...)
		}
		return out
	}
	if _, ok := v.(*ast.MappingNode); !ok {
		d.errorf(v, path, "a merge key (<<) takes a mapping or a list of mappings, got %s", kindOf(v))
		return nil
	}
	ents, _ := d.mapEntries(v, path, valid)
	return ents
}

func (d *decoder) record(path string, p Position) {
	if _, ok := d.f.pos[path]; !ok {
		d.f.pos[path] = p
	}
	if d.sub != nil && strings.HasPrefix(path, d.subBase) {
		rel := path[len(d.subBase):]
		if _, ok := d.sub.pos[rel]; !ok {
			d.sub.pos[rel] = p
		}
	}
}

func (d *decoder) unknownField(key ast.Node, field, name string, valid []string) {
	if s := closest(name, valid); s != "" {
		d.errorf(key, field, "unknown field %q; did you mean %q?", name, s)
		return
	}
	d.errorf(key, field, "unknown field %q; valid fields are %s", name, strings.Join(valid, ", "))
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// keyText returns a mapping key's text; ok is false for a non-scalar key.
func keyText(n ast.Node) (string, bool) {
	switch k := n.(type) {
	case *ast.StringNode:
		return k.Value, true
	case *ast.MappingKeyNode:
		return "", false
	case ast.ScalarNode:
		if tk := k.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}

// kindOf names a node's YAML kind for error messages.
func kindOf(n ast.Node) string {
	if isNil(n) {
		return "nothing"
	}
	switch n.Type() {
	case ast.MappingType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.NullType:
		return "an empty value"
	case ast.StringType, ast.LiteralType:
		return "a string"
	case ast.IntegerType:
		return "an integer"
	case ast.FloatType, ast.InfinityType, ast.NanType:
		return "a number"
	case ast.BoolType:
		return "a boolean"
	default:
		return "a " + strings.ToLower(n.Type().String())
	}
}

// scalar is a scalar value after ${VAR} expansion.
type scalar struct {
	text    string
	kind    ast.NodeType
	node    ast.Node
	fromEnv bool   // the text came out of ${VAR} expansion
	raw     string // the text as written, before expansion
}

// display shows the value as the user wrote it: strings quoted and cut at
// redact.MaxQuoted bytes; a value that came out of ${VAR} expansion as
// written ("${VAR}/x"), never expanded (issue 29), saying so, so that the
// reader looks at the variable's value rather than at the file.
func (s scalar) display() string {
	switch {
	case s.kind == ast.NullType:
		return "an empty value"
	case s.fromEnv:
		return "the value of " + redact.Quote(s.raw) + " (not shown: environment values may be secrets)"
	case s.kind == ast.StringType, s.kind == ast.LiteralType:
		return redact.Quote(s.text)
	default:
		return redact.Cut(s.text)
	}
}

// shown is value (the parsed value, formatted) for an error, or the value
// as written when it came out of ${VAR} expansion.
func (s scalar) shown(value string) string {
	if s.fromEnv {
		return s.display()
	}
	return value
}

func (d *decoder) scalar(e entry) (scalar, bool) {
	n, ok := d.resolveOK(e.val, e.path)
	if !ok {
		return scalar{}, false
	}
	if isNil(n) {
		return scalar{kind: ast.NullType, node: e.keyN}, true
	}
	sc := scalar{kind: n.Type(), node: n}
	switch v := n.(type) {
	case *ast.NullNode:
		return sc, true
	case *ast.StringNode:
		sc.text = v.Value
	case *ast.LiteralNode:
		if v.Value != nil {
			sc.text = v.Value.Value
		}
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if tk := n.GetToken(); tk != nil {
			sc.text = tk.Value
		}
		return sc, true
	default:
		d.errorf(n, e.path, "must be a single value, got %s", kindOf(n))
		return sc, false
	}
	if strings.Contains(sc.text, "${") {
		x, err := expandEnv(sc.text, d.env)
		if err != nil {
			d.errorf(n, e.path, "%s", err.Error())
			return sc, false
		}
		if _, ok := d.f.written[x]; !ok && x != sc.text {
			d.f.written[x] = sc.text
		}
		sc.raw, sc.text, sc.fromEnv = sc.text, x, true
	}
	return sc, true
}

// str reads any scalar as text (null is ""). It reports false after an error.
func (d *decoder) str(e entry, dst *string) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	*dst = sc.text
	return true
}

// enum reads a string that must be one of valid, spelt as valid spells it
// (the JSON Schema's enum is case-sensitive too, issue 32; a value in
// another case gets the canonical spelling as its suggestion).
func (d *decoder) enum(e entry, dst *string, noun string, valid []string) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	if v, ok := matchEnum(sc.text, valid); ok {
		*dst = v
		return true
	}
	if sc.kind == ast.NullType {
		d.errorf(sc.node, e.path, "must not be empty; valid values are %s", strings.Join(valid, ", "))
		return false
	}
	d.errorf(sc.node, e.path, "unknown %s %s%s; valid values are %s", noun, sc.display(), suggestion(sc.text, valid), strings.Join(valid, ", "))
	return false
}

func matchEnum(s string, valid []string) (string, bool) {
	for _, v := range valid {
		if s == v {
			return v, true
		}
	}
	return "", false
}

// intIn reads an integer in lo..hi (math.MinInt / math.MaxInt for no bound).
func (d *decoder) intIn(e entry, dst *int, lo, hi int) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	var v int
	switch {
	case sc.kind == ast.IntegerType:
		iv, isInt := sc.node.(*ast.IntegerNode)
		parsed := false
		if isInt {
			switch x := iv.Value.(type) {
			case int64:
				if x >= math.MinInt && x <= math.MaxInt {
					v, parsed = int(x), true
				}
			case uint64:
				if x <= math.MaxInt {
					v, parsed = int(x), true
				}
			}
		}
		if !parsed {
			d.rangeErr(e, sc.text, bothBounds(lo, hi))
			return false
		}
	case sc.kind == ast.FloatType:
		// 3.0 is the integer 3, as JSON Schema's "integer" takes it.
		f, err := strconv.ParseFloat(strings.ReplaceAll(sc.text, "_", ""), 64)
		if err != nil || f != math.Trunc(f) {
			d.errorf(sc.node, e.path, "must be an integer, got %s", sc.display())
			return false
		}
		if f < math.MinInt64 || f >= math.MaxInt64 {
			d.rangeErr(e, sc.text, bothBounds(lo, hi))
			return false
		}
		v = int(f)
	case sc.fromEnv || allDigits.MatchString(sc.text) && plain(sc.node):
		x, err := strconv.Atoi(strings.TrimSpace(sc.text))
		if errors.Is(err, strconv.ErrRange) {
			d.rangeErr(e, sc.shown(strings.TrimSpace(sc.text)), bothBounds(lo, hi))
			return false
		}
		if err != nil {
			d.errorf(sc.node, e.path, "must be an integer, got %s", sc.display())
			return false
		}
		v = x
	default:
		d.errorf(sc.node, e.path, "must be an integer, got %s", sc.display())
		return false
	}
	if v < lo || v > hi {
		d.rangeErr(e, sc.shown(strconv.Itoa(v)), intRange(lo, hi))
		return false
	}
	*dst = v
	return true
}

// plain reports whether n was written without quotes (a quoted "3" is a
// string, as in JSON).
func plain(n ast.Node) bool {
	tk := n.GetToken()
	return tk != nil && tk.Type != token.DoubleQuoteType && tk.Type != token.SingleQuoteType
}

// allDigits matches an integer written in decimal (one too large for int64
// is still an integer, reported as out of range).
var allDigits = regexp.MustCompile(`^\s*[-+]?[0-9]+\s*$`)

func intRange(lo, hi int) string {
	switch {
	case lo == math.MinInt && hi == math.MaxInt:
		return "any integer"
	case hi == math.MaxInt:
		return fmt.Sprintf(">= %d", lo)
	default:
		return fmt.Sprintf("%d..%d", lo, hi)
	}
}

// bothBounds names the integers from lo to hi with both bounds: for a value
// beyond int64, which "any integer" or ">= 0" would seem to allow.
func bothBounds(lo, hi int) string { return fmt.Sprintf("%d..%d", lo, hi) }

func (d *decoder) rangeErr(e entry, got, valid string) {
	n := d.resolve(e.val, e.path)
	if isNil(n) {
		n = e.keyN
	}
	d.errorf(n, e.path, "%s is out of range; valid values are %s", got, valid)
}

// durRange bounds a duration: min..max (max 0 = no upper bound); positive
// requires > 0.
type durRange struct {
	min, max time.Duration
	positive bool
}

// dur reads a Go duration string (300ms, 30s, 1m); a bare 0 is accepted.
func (d *decoder) dur(e entry, dst *time.Duration, r durRange) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	var v time.Duration
	switch {
	case sc.kind == ast.IntegerType && sc.text == "0":
		v = 0
	case sc.kind == ast.StringType || sc.kind == ast.LiteralType:
		x, err := time.ParseDuration(strings.TrimSpace(sc.text))
		if err != nil {
			d.errorf(sc.node, e.path, "%s is not a duration; use a Go duration such as 300ms, 30s or 1m", sc.display())
			return false
		}
		v = x
	default:
		d.errorf(sc.node, e.path, "%s is not a duration; use a Go duration such as 300ms, 30s or 1m", sc.display())
		return false
	}
	switch {
	case r.positive && v <= 0:
		d.rangeErr(e, sc.shown(FormatDuration(v)), "> 0s")
		return false
	case v < r.min:
		valid := ">= " + FormatDuration(r.min)
		if r.max > 0 {
			valid = FormatDuration(r.min) + ".." + FormatDuration(r.max)
		}
		d.rangeErr(e, sc.shown(FormatDuration(v)), valid)
		return false
	case r.max > 0 && v > r.max:
		d.rangeErr(e, sc.shown(FormatDuration(v)), FormatDuration(r.min)+".."+FormatDuration(r.max))
		return false
	}
	*dst = v
	return true
}

// FormatDuration writes a duration without trailing zero units, the way
// the subscriptions file is written: 12h, 1m30s, 300ms (not 12h0m0s).
func FormatDuration(v time.Duration) string {
	s := v.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// boolean reads true or false.
func (d *decoder) boolean(e entry, dst *bool) bool {
	sc, ok := d.scalar(e)
	if !ok {
		return false
	}
	if b, isBool := sc.node.(*ast.BoolNode); isBool {
		*dst = b.Value
		return true
	}
	if sc.fromEnv {
		if b, err := strconv.ParseBool(strings.TrimSpace(sc.text)); err == nil {
			*dst = b
			return true
		}
	}
	d.errorf(sc.node, e.path, "must be true or false, got %s", sc.display())
	return false
}

// strMap reads a mapping of names to scalar values (text after expansion).
func (d *decoder) strMap(e entry) map[string]string {
	ents, ok := d.mapEntries(e.val, e.path, nil)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(ents))
	for _, e := range ents {
		var s string
		if d.str(e, &s) {
			out[e.key] = s
		}
	}
	return out
}

// strList reads a list of scalar values.
func (d *decoder) strList(e entry) []string {
	n := d.resolve(e.val, e.path)
	if isNil(n) || n.Type() == ast.NullType {
		return nil
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.errorf(n, e.path, "must be a list, got %s", kindOf(n))
		return nil
	}
	out := make([]string, 0, len(seq.Values))
	for i, it := range seq.Values {
		item := entry{key: e.key, keyN: it, val: it, path: fmt.Sprintf("%s[%d]", e.path, i)}
		var s string
		if d.str(item, &s) {
			d.record(item.path, d.posOf(it))
			out = append(out, s)
		}
	}
	return out
}

// httpURL checks that s is an absolute http or https URL.
func (d *decoder) httpURL(e entry, s string) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.errorf(d.resolve(e.val, e.path), e.path, "%s is not an http or https URL (such as http://localhost:8080/handle)", redact.Quote(redact.URL(d.asWritten(s))))
	}
}

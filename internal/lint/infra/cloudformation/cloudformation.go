// Package cloudformation reads AWS CloudFormation templates, JSON or YAML
// (with the short-form intrinsic tags !Ref, !GetAtt, !Sub, ...), into the
// resources of `lint --infra`: each AWS::SQS::Queue and
// AWS::SNS::Subscription with the settings a subscription runs on, at the
// positions they are written.
//
// Intrinsic functions are resolved as far as the template alone fixes
// them, and never guessed: a Ref to a parameter with a Default is that
// default; Fn::Sub, Fn::Join, Fn::Select and Fn::FindInMap over values so
// resolved are computed; `!GetAtt Q.QueueName` of a queue with a QueueName
// is that name. Everything else (pseudo parameters such as AWS::Region, a
// parameter without a default or read from SSM, a queue's ARN or URL,
// Fn::If, Fn::ImportValue) is Unknown. A value that refers to a resource of
// the template (`!GetAtt DLQ.Arn`, `!Ref DLQ`, `!Sub ${DLQ.Arn}`) records
// its logical id in infra.Value.Ref, so a redrive policy's target can be
// matched to the queue it names (the resource whose Address is that id)
// although its ARN is decided at deploy time. A queue without a QueueName
// gets a name CloudFormation generates: its Name is Unknown, and it is
// matched by such references.
//
// A value's position is its property's key (for a policy written as a JSON
// string, the policy's key: the string's inside has no positions); an
// Unset value is at its resource's logical id.
//
// The file is parsed under the limits of a subscriptions file
// (config.ParseLimited, config.AliasBudget); intrinsic functions that nest
// deeper than MaxDepth, or GetAtt references that loop, are refused.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/..., internal/broker/gcp/...,
// internal/pump, github.com/spf13/cobra
package cloudformation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
	"github.com/brightergo/brighter/internal/lint/infra/yamldoc"
)

// The resource types the reader turns into infra resources.
const (
	// TypeQueue is an SQS queue, read as infra.KindSQSQueue.
	TypeQueue = "AWS::SQS::Queue"
	// TypeSubscription is an SNS subscription, read as
	// infra.KindSNSSubscription.
	TypeSubscription = "AWS::SNS::Subscription"
)

// MaxDepth is how deep intrinsic functions may nest, counting each
// function, each value it reads and each GetAtt followed to another
// resource's property (a real template nests 3 or 4 deep).
const MaxDepth = 64

// Detect reports whether data is a CloudFormation template: a JSON or YAML
// mapping with an AWSTemplateFormatVersion key, or with a Resources
// mapping one of whose resources has a Type starting with "AWS::". A file
// the YAML parser refuses (or over the limits) is not one.
func Detect(data []byte) bool {
	if !bytes.Contains(data, []byte("AWSTemplateFormatVersion")) && !bytes.Contains(data, []byte("AWS::")) {
		return false
	}
	f, err := yamldoc.Parse("", data)
	if err != nil || len(f.Docs) != 1 {
		return false
	}
	top, ok := f.Entries(0, f.Docs[0], "")
	if !ok {
		return false
	}
	if yamldoc.Find(top, "AWSTemplateFormatVersion") != nil {
		return true
	}
	res := yamldoc.Find(top, "Resources")
	if res == nil {
		return false
	}
	ents, ok := f.Entries(0, res.Val, res.Field)
	if !ok {
		return false
	}
	for _, e := range ents {
		body, ok := f.Entries(0, e.Val, e.Field)
		if !ok {
			continue
		}
		if t := yamldoc.Find(body, "Type"); t != nil {
			_, v, _ := f.Untag(0, t.Val, t.Field)
			if s, kind := yamldoc.Scalar(v); kind == yamldoc.String && strings.HasPrefix(s, "AWS::") {
				return true
			}
		}
	}
	return false
}

// Read reads the template in data (name is its path, used in positions)
// and returns its SQS queues and SNS subscriptions in file order, with
// Address the logical id. Other resource types are skipped.
//
// Errors: a YAML or JSON syntax error, a limit exceeded, or a template
// that is not one (no Resources mapping, a property of the wrong type, an
// unknown intrinsic tag, a Ref or GetAtt to nothing the template declares,
// intrinsics nested deeper than MaxDepth, GetAtt references that loop) is
// returned as config.Errors with positions in name.
func Read(name string, data []byte) ([]infra.Resource, error) {
	f, err := yamldoc.Parse(name, data)
	if err != nil {
		return nil, err
	}
	if len(f.Docs) != 1 {
		return nil, config.Errors{{File: name, Line: 1, Column: 1, Msg: fmt.Sprintf("a CloudFormation template is one document; found %d", len(f.Docs))}}
	}
	t := &template{f: f, params: map[string]param{}, resources: map[string]*resource{}, names: map[string]*val{}}
	out := t.read()
	if err := f.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// template is one template being read.
type template struct {
	f         *yamldoc.File
	params    map[string]param
	resources map[string]*resource
	mappings  []yamldoc.Entry
	// names holds each queue's resolved QueueName by logical id; a nil
	// entry is one being resolved (a GetAtt that reaches it again loops).
	names map[string]*val
	depth int
}

type param struct {
	typ string
	def ast.Node // nil without a Default
}

type resource struct {
	id    string
	typ   string
	pos   config.Position
	props []yamldoc.Entry
}

// val is a resolved expression: a string when Known, and the logical id
// of the resource it refers to.
type val struct {
	s     string
	state infra.State
	ref   string
}

func (t *template) read() []infra.Resource {
	f := t.f
	top, ok := f.Entries(0, f.Docs[0], "")
	if !ok {
		return nil
	}
	if p := yamldoc.Find(top, "Parameters"); p != nil {
		ents, _ := f.Entries(0, p.Val, p.Field)
		for _, e := range ents {
			body, ok := f.Entries(0, e.Val, e.Field)
			if !ok {
				continue
			}
			var pr param
			if ty := yamldoc.Find(body, "Type"); ty != nil {
				_, v, _ := f.Untag(0, ty.Val, ty.Field)
				pr.typ, _ = yamldoc.Scalar(v)
			}
			if d := yamldoc.Find(body, "Default"); d != nil {
				pr.def = d.Val
			}
			t.params[e.Key] = pr
		}
	}
	if m := yamldoc.Find(top, "Mappings"); m != nil {
		t.mappings, _ = f.Entries(0, m.Val, m.Field)
	}
	res := yamldoc.Find(top, "Resources")
	if res == nil {
		f.Errorf(f.Docs[0], "", "a CloudFormation template needs a Resources mapping")
		return nil
	}
	ents, ok := f.Entries(0, res.Val, res.Field)
	if !ok {
		return nil
	}
	var order []*resource
	for _, e := range ents {
		body, ok := f.Entries(0, e.Val, e.Field)
		if !ok {
			continue
		}
		r := &resource{id: e.Key, pos: e.Pos}
		if ty := yamldoc.Find(body, "Type"); ty != nil {
			_, v, _ := f.Untag(0, ty.Val, ty.Field)
			if s, kind := yamldoc.Scalar(v); kind == yamldoc.String {
				r.typ = s
			} else {
				f.Errorf(v, ty.Field, "a resource's Type must be a string, got %s", yamldoc.KindOf(v))
			}
		}
		if p := yamldoc.Find(body, "Properties"); p != nil && (r.typ == TypeQueue || r.typ == TypeSubscription) {
			r.props, _ = f.Entries(0, p.Val, p.Field)
		}
		t.resources[e.Key] = r
		order = append(order, r)
	}
	var out []infra.Resource
	for _, r := range order {
		switch r.typ {
		case TypeQueue:
			out = append(out, t.queue(r))
		case TypeSubscription:
			out = append(out, t.subscription(r))
		}
	}
	return out
}

func (t *template) queue(r *resource) infra.Resource {
	q := t.base(r, infra.KindSQSQueue)
	q.Name = t.str(r, "QueueName")
	if q.Name.State == infra.Unset {
		// CloudFormation generates the name: the queue is matched by its
		// logical id (Address), which references to it record.
		q.Name = infra.Value[string]{State: infra.Unknown, Pos: r.pos}
	}
	q.FIFO = t.boolean(r, "FifoQueue")
	q.VisibilityTimeout = t.seconds(r, "VisibilityTimeout")
	q.MessageRetention = t.seconds(r, "MessageRetentionPeriod")
	q.MaxMessageSize = t.integer(r, "MaximumMessageSize")
	if e := yamldoc.Find(r.props, "RedrivePolicy"); e != nil {
		q.Redrive = t.redrive(e, true)
	}
	if e := yamldoc.Find(r.props, "RedriveAllowPolicy"); e != nil {
		q.RedriveAllow = t.redriveAllow(e)
	}
	return q
}

func (t *template) subscription(r *resource) infra.Resource {
	s := t.base(r, infra.KindSNSSubscription)
	s.TopicARN = t.str(r, "TopicArn")
	s.Protocol = t.str(r, "Protocol")
	s.Endpoint = t.str(r, "Endpoint")
	s.RawMessageDelivery = t.boolean(r, "RawMessageDelivery")
	if e := yamldoc.Find(r.props, "RedrivePolicy"); e != nil {
		s.Redrive = t.redrive(e, false)
	}
	return s
}

// base returns the resource with every setting Unset at its position and
// its ARN Unknown (CloudFormation never fixes it).
func (t *template) base(r *resource, kind infra.Kind) infra.Resource {
	out := infra.Resource{Kind: kind, Address: r.id, Pos: r.pos}
	for _, p := range []*config.Position{
		&out.Name.Pos, &out.ARN.Pos, &out.Project.Pos, &out.FIFO.Pos, &out.VisibilityTimeout.Pos,
		&out.MessageRetention.Pos, &out.MaxMessageSize.Pos, &out.TopicARN.Pos, &out.Protocol.Pos,
		&out.Endpoint.Pos, &out.RawMessageDelivery.Pos, &out.Topic.Pos, &out.AckDeadline.Pos,
		&out.Ordering.Pos, &out.ExactlyOnce.Pos, &out.RetryMinBackoff.Pos, &out.RetryMaxBackoff.Pos,
	} {
		*p = r.pos
	}
	out.ARN = infra.Value[string]{State: infra.Unknown, Pos: r.pos}
	return out
}

// prop evaluates the property key of r; Unset at r's position when absent.
func (t *template) prop(r *resource, key string) (val, config.Position, string, bool) {
	e := yamldoc.Find(r.props, key)
	if e == nil {
		return val{}, r.pos, "", true
	}
	v, ok := t.eval(e.Val, e.Field)
	return v, e.Pos, e.Field, ok
}

func (t *template) str(r *resource, key string) infra.Value[string] {
	v, pos, _, _ := t.prop(r, key)
	return strValue(v, pos)
}

func (t *template) integer(r *resource, key string) infra.Value[int] {
	v, pos, field, _ := t.prop(r, key)
	return t.intValue(v, pos, field)
}

func (t *template) seconds(r *resource, key string) infra.Value[time.Duration] {
	n := t.integer(r, key)
	return infra.Value[time.Duration]{V: time.Duration(n.V) * time.Second, State: n.State, Pos: n.Pos, Ref: n.Ref}
}

func (t *template) boolean(r *resource, key string) infra.Value[bool] {
	v, pos, field, _ := t.prop(r, key)
	return t.boolValue(v, pos, field)
}

func strValue(v val, pos config.Position) infra.Value[string] {
	out := infra.Value[string]{State: v.state, Pos: pos, Ref: v.ref}
	if v.state == infra.Known {
		out.V = v.s
	}
	return out
}

func (t *template) intValue(v val, pos config.Position, field string) infra.Value[int] {
	out := infra.Value[int]{State: v.state, Pos: pos, Ref: v.ref}
	if v.state == infra.Known {
		n, err := strconv.Atoi(strings.TrimSpace(v.s))
		if err != nil {
			t.f.ErrorAt(pos, field, "must be a whole number, got %q", v.s)
			out.State = infra.Unknown
			return out
		}
		out.V = n
	}
	return out
}

func (t *template) boolValue(v val, pos config.Position, field string) infra.Value[bool] {
	out := infra.Value[bool]{State: v.state, Pos: pos, Ref: v.ref}
	if v.state == infra.Known {
		switch strings.ToLower(strings.TrimSpace(v.s)) {
		case "true":
			out.V = true
		case "false":
		default:
			t.f.ErrorAt(pos, field, "must be true or false, got %q", v.s)
			out.State = infra.Unknown
		}
	}
	return out
}

// redrive reads a RedrivePolicy: a mapping, a JSON string, or an
// intrinsic that yields one. withCount reads maxReceiveCount (an SQS
// queue's; an SNS subscription's policy has only the target).
func (t *template) redrive(e *yamldoc.Entry, withCount bool) *infra.Redrive {
	out := &infra.Redrive{Pos: e.Pos, TargetARN: infra.Value[string]{Pos: e.Pos}, MaxReceiveCount: infra.Value[int]{Pos: e.Pos}}
	ents, raw, ok := t.policy(e)
	if !ok {
		out.TargetARN.State = infra.Unknown
		if withCount {
			out.MaxReceiveCount.State = infra.Unknown
		}
		return out
	}
	if ents != nil || raw == nil {
		if a := yamldoc.Find(ents, "deadLetterTargetArn"); a != nil {
			v, _ := t.eval(a.Val, a.Field)
			out.TargetARN = strValue(v, a.Pos)
		}
		if c := yamldoc.Find(ents, "maxReceiveCount"); c != nil && withCount {
			v, _ := t.eval(c.Val, c.Field)
			out.MaxReceiveCount = t.intValue(v, c.Pos, c.Field)
		}
		return out
	}
	if s, ok := raw["deadLetterTargetArn"]; ok {
		out.TargetARN = strValue(jsonVal(s), e.Pos)
	}
	if c, ok := raw["maxReceiveCount"]; ok && withCount {
		out.MaxReceiveCount = t.intValue(jsonVal(c), e.Pos, e.Field+".maxReceiveCount")
	}
	return out
}

func (t *template) redriveAllow(e *yamldoc.Entry) *infra.RedriveAllow {
	out := &infra.RedriveAllow{Pos: e.Pos, Permission: infra.Value[string]{Pos: e.Pos}}
	ents, raw, ok := t.policy(e)
	if !ok {
		out.Permission.State = infra.Unknown
		return out
	}
	if ents != nil || raw == nil {
		if p := yamldoc.Find(ents, "redrivePermission"); p != nil {
			v, _ := t.eval(p.Val, p.Field)
			out.Permission = strValue(v, p.Pos)
		}
		if s := yamldoc.Find(ents, "sourceQueueArns"); s != nil {
			tag, v, ok := t.f.Untag(0, s.Val, s.Field)
			seq, isSeq := v.(*ast.SequenceNode)
			if !ok || !isSeq || tag != "" {
				// An intrinsic (!If, !Split) decides the list at deploy time.
				out.SourceARNs = append(out.SourceARNs, infra.Value[string]{State: infra.Unknown, Pos: s.Pos})
			} else {
				for i, it := range seq.Values {
					v, _ := t.eval(it, fmt.Sprintf("%s[%d]", s.Field, i))
					out.SourceARNs = append(out.SourceARNs, strValue(v, t.f.Pos(it)))
				}
			}
		}
		return out
	}
	if p, ok := raw["redrivePermission"]; ok {
		out.Permission = strValue(jsonVal(p), e.Pos)
	}
	if list, ok := raw["sourceQueueArns"].([]any); ok {
		for _, s := range list {
			out.SourceARNs = append(out.SourceARNs, strValue(jsonVal(s), e.Pos))
		}
	}
	return out
}

// policy reads a policy property (type Json): its entries when written as
// a mapping; its decoded object when written as a JSON string or an
// intrinsic that resolves to one. ok is false when the policy is not
// fixed by the template (an intrinsic that does not resolve), or is
// malformed (recorded).
func (t *template) policy(e *yamldoc.Entry) (ents []yamldoc.Entry, raw map[string]any, ok bool) {
	tag, v, ok := t.f.Untag(0, e.Val, e.Field)
	if !ok {
		return nil, nil, false
	}
	if m, isMap := v.(*ast.MappingNode); isMap && tag == "" && !isIntrinsic(t, m, e.Field) {
		ents, ok = t.f.Entries(0, v, e.Field)
		return ents, nil, ok
	}
	r, ok := t.eval(e.Val, e.Field)
	if !ok || r.state != infra.Known {
		return nil, nil, false
	}
	if err := json.Unmarshal([]byte(r.s), &raw); err != nil {
		t.f.ErrorAt(e.Pos, e.Field, "must be a JSON object: %v", err)
		return nil, nil, false
	}
	return nil, raw, true
}

func isIntrinsic(t *template, m *ast.MappingNode, field string) bool {
	if len(m.Values) != 1 {
		return false
	}
	_, k, ok := t.f.Untag(0, m.Values[0].Key, field)
	if !ok {
		return false
	}
	s, _ := yamldoc.Scalar(k)
	return s == "Ref" || strings.HasPrefix(s, "Fn::")
}

// jsonVal is a value of a policy written as a JSON string.
func jsonVal(v any) val {
	switch x := v.(type) {
	case string:
		return val{s: x, state: infra.Known}
	case float64:
		return val{s: strconv.FormatFloat(x, 'f', -1, 64), state: infra.Known}
	case bool:
		return val{s: strconv.FormatBool(x), state: infra.Known}
	case nil:
		return val{}
	}
	return val{state: infra.Unknown}
}

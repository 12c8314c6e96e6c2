// Package terraform reads Terraform into the resources of internal/lint/infra:
// the JSON of `terraform show -json PLAN` (ReadPlan, with the
// hashicorp/terraform-json types) and static .tf files (ReadHCL, with
// HashiCorp's HCL parser), for aws_sqs_queue, aws_sns_topic_subscription,
// google_pubsub_subscription and google_pubsub_topic.
//
// A value that Terraform decides only at plan or apply time (a variable
// without a default, a reference to another resource's attribute, an
// attribute the plan marks unknown) is infra.Unknown, never guessed; a
// reference to another resource of the files keeps that resource's address
// (Value.Ref) so rules can follow it. Positions are the attribute's line and
// column in the .tf file, or the key's in the plan JSON.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/config, internal/lint/infra
//
// Must not import: internal/broker/sqs/..., internal/broker/gcp/...,
// github.com/spf13/cobra
package terraform

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
)

// Readers returns the readers of this package, keyed by format, for
// infra.Load.
func Readers() infra.Readers {
	return infra.Readers{
		infra.FormatTerraformPlan: ReadPlan,
		infra.FormatTerraform:     ReadHCL,
	}
}

// field is one attribute as a reader found it: its value (possibly
// unknown), whether the file writes it, where, and the address of the
// resource it refers to when it is a reference.
type field struct {
	val cty.Value
	set bool
	pos config.Position
	ref string
}

// body is the attributes and nested blocks of one resource or block, as
// written in HCL or planned in the JSON.
type body interface {
	// attr returns the attribute name (set false when absent).
	attr(name string) field
	// block returns the first nested block name (set false when absent).
	block(name string) (body, field)
	// object returns the attribute name read as a JSON object (a
	// jsonencode({...}) or a JSON string): the object's body when it is
	// known, and the attribute as a field.
	object(name string) (body, field)
	// at is where the body starts.
	at() config.Position
}

// kinds are the resource types read, by Terraform type.
var kinds = map[string]infra.Kind{
	"aws_sqs_queue":              infra.KindSQSQueue,
	"aws_sns_topic_subscription": infra.KindSNSSubscription,
	"google_pubsub_subscription": infra.KindPubSubSubscription,
	"google_pubsub_topic":        infra.KindPubSubTopic,
	// A queue's policies declared apart from it.
	"aws_sqs_queue_redrive_policy":       infra.KindSQSQueuePolicy,
	"aws_sqs_queue_redrive_allow_policy": infra.KindSQSQueuePolicy,
}

// resourceRef returns the address of the resource a traversal such as
// "aws_sqs_queue.dlq.arn" refers to ("aws_sqs_queue.dlq"), or "".
func resourceRef(parts []string) string {
	if len(parts) < 2 {
		return ""
	}
	if _, ok := kinds[parts[0]]; !ok {
		return ""
	}
	return parts[0] + "." + parts[1]
}

// build turns the body of a resource of type typ at addr into a Resource.
func build(typ, addr string, b body) (infra.Resource, bool) {
	kind, ok := kinds[typ]
	if !ok {
		return infra.Resource{}, false
	}
	r := infra.Resource{Kind: kind, Address: addr, Pos: b.at()}
	switch kind {
	case infra.KindSQSQueuePolicy:
		r.Queue = str(b.attr("queue_url"), b.at())
		r.Redrive = redrive(b)
		r.RedriveAllow = redriveAllow(b)
	case infra.KindSQSQueue:
		r.Name = str(b.attr("name"), b.at())
		if !r.Name.IsKnown() && r.Name.State == infra.Unset {
			// Terraform names a queue without a name at apply time.
			r.Name.State = infra.Unknown
		}
		r.ARN = str(b.attr("arn"), b.at())
		r.FIFO = boolean(b.attr("fifo_queue"), b.at())
		r.VisibilityTimeout = seconds(b.attr("visibility_timeout_seconds"), b.at())
		r.MessageRetention = seconds(b.attr("message_retention_seconds"), b.at())
		r.MaxMessageSize = integer(b.attr("max_message_size"), b.at())
		r.Redrive = redrive(b)
		r.RedriveAllow = redriveAllow(b)
	case infra.KindSNSSubscription:
		r.ARN = str(b.attr("arn"), b.at())
		r.TopicARN = str(b.attr("topic_arn"), b.at())
		r.Protocol = str(b.attr("protocol"), b.at())
		r.Endpoint = str(b.attr("endpoint"), b.at())
		r.RawMessageDelivery = boolean(b.attr("raw_message_delivery"), b.at())
		r.Redrive = redrive(b)
	case infra.KindPubSubTopic:
		r.Name = str(b.attr("name"), b.at())
		r.Project = str(b.attr("project"), b.at())
		r.Name.V = infra.ShortName(r.Name.V)
	case infra.KindPubSubSubscription:
		r.Name = str(b.attr("name"), b.at())
		r.Project = str(b.attr("project"), b.at())
		r.Name.V = infra.ShortName(r.Name.V)
		r.Topic = str(b.attr("topic"), b.at())
		r.AckDeadline = seconds(b.attr("ack_deadline_seconds"), b.at())
		r.Ordering = boolean(b.attr("enable_message_ordering"), b.at())
		r.ExactlyOnce = boolean(b.attr("enable_exactly_once_delivery"), b.at())
		r.MessageRetention = duration(b.attr("message_retention_duration"), b.at())
		if rb, f := b.block("retry_policy"); f.set {
			r.RetryPolicy = true
			if rb == nil { // decided at apply time
				r.RetryMinBackoff = infra.Value[time.Duration]{State: infra.Unknown, Pos: f.pos}
				r.RetryMaxBackoff = infra.Value[time.Duration]{State: infra.Unknown, Pos: f.pos}
			} else {
				r.RetryMinBackoff = duration(rb.attr("minimum_backoff"), f.pos)
				r.RetryMaxBackoff = duration(rb.attr("maximum_backoff"), f.pos)
			}
		}
		if db, f := b.block("dead_letter_policy"); f.set {
			d := &infra.DeadLetterPolicy{Pos: f.pos}
			if db == nil {
				d.Topic = infra.Value[string]{State: infra.Unknown, Pos: f.pos}
				d.MaxDeliveryAttempts = infra.Value[int]{State: infra.Unknown, Pos: f.pos}
			} else {
				d.Topic = str(db.attr("dead_letter_topic"), f.pos)
				d.MaxDeliveryAttempts = integer(db.attr("max_delivery_attempts"), f.pos)
			}
			r.DeadLetter = d
		}
	}
	return r, true
}

// redriveAllow reads a queue's redrive_allow_policy.
func redriveAllow(b body) *infra.RedriveAllow {
	ob, f := b.object("redrive_allow_policy")
	if !f.set || empty(f) {
		return nil
	}
	ra := &infra.RedriveAllow{Pos: f.pos}
	if ob == nil {
		ra.Permission = infra.Value[string]{State: infra.Unknown, Pos: f.pos}
		return ra
	}
	ra.Permission = str(ob.attr("redrivePermission"), f.pos)
	if src := ob.attr("sourceQueueArns"); src.set {
		ra.SourceARNs = list(src)
	}
	return ra
}

// empty reports whether f is a known empty string: what the providers
// plan for a policy attribute no configuration sets.
func empty(f field) bool {
	return f.set && f.val.IsKnown() && !f.val.IsNull() && f.val.Type() == cty.String && f.val.AsString() == ""
}

// redrive reads a queue's or SNS subscription's redrive_policy.
func redrive(b body) *infra.Redrive {
	ob, f := b.object("redrive_policy")
	if !f.set || empty(f) {
		return nil
	}
	rd := &infra.Redrive{Pos: f.pos}
	if ob == nil {
		rd.TargetARN = infra.Value[string]{State: infra.Unknown, Pos: f.pos, Ref: f.ref}
		rd.MaxReceiveCount = infra.Value[int]{State: infra.Unknown, Pos: f.pos}
		return rd
	}
	rd.TargetARN = str(ob.attr("deadLetterTargetArn"), f.pos)
	rd.MaxReceiveCount = integer(ob.attr("maxReceiveCount"), f.pos)
	return rd
}

// value returns the state of f: Unset when absent or null, Unknown when
// not wholly known.
func state(f field) infra.State {
	switch {
	case !f.set || (f.val.IsKnown() && f.val.IsNull()):
		return infra.Unset
	case !f.val.IsWhollyKnown():
		return infra.Unknown
	}
	return infra.Known
}

func posOr(f field, def config.Position) config.Position {
	if f.set && f.pos.IsValid() {
		return f.pos
	}
	return def
}

// str reads f as a string (a number converts).
func str(f field, def config.Position) infra.Value[string] {
	v := infra.Value[string]{State: state(f), Pos: posOr(f, def), Ref: f.ref}
	if v.State != infra.Known {
		return v
	}
	c, err := convert.Convert(f.val, cty.String)
	if err != nil {
		v.State = infra.Unknown
		return v
	}
	v.V = c.AsString()
	return v
}

// integer reads f as an int (a numeric string converts, as SQS's
// maxReceiveCount is written either way).
func integer(f field, def config.Position) infra.Value[int] {
	v := infra.Value[int]{State: state(f), Pos: posOr(f, def), Ref: f.ref}
	if v.State != infra.Known {
		return v
	}
	c, err := convert.Convert(f.val, cty.Number)
	if err != nil {
		v.State = infra.Unknown
		return v
	}
	n, acc := c.AsBigFloat().Int64()
	if acc != big.Exact || n < -1<<31 || n > 1<<31-1 {
		v.State = infra.Unknown
		return v
	}
	v.V = int(n)
	return v
}

// boolean reads f as a bool ("true" converts).
func boolean(f field, def config.Position) infra.Value[bool] {
	v := infra.Value[bool]{State: state(f), Pos: posOr(f, def), Ref: f.ref}
	if v.State != infra.Known {
		return v
	}
	c, err := convert.Convert(f.val, cty.Bool)
	if err != nil {
		v.State = infra.Unknown
		return v
	}
	v.V = c.True()
	return v
}

// seconds reads f as a whole number of seconds.
func seconds(f field, def config.Position) infra.Value[time.Duration] {
	n := integer(f, def)
	return infra.Value[time.Duration]{V: time.Duration(n.V) * time.Second, State: n.State, Pos: n.Pos, Ref: n.Ref}
}

// duration reads f as a Google duration string ("600s", "3.5s").
func duration(f field, def config.Position) infra.Value[time.Duration] {
	s := str(f, def)
	v := infra.Value[time.Duration]{State: s.State, Pos: s.Pos, Ref: s.Ref}
	if s.State != infra.Known {
		return v
	}
	secs, ok := strings.CutSuffix(strings.TrimSpace(s.V), "s")
	x, err := strconv.ParseFloat(secs, 64)
	if !ok || err != nil || x < 0 || x > 1e9 {
		v.State = infra.Unknown
		return v
	}
	v.V = time.Duration(x * float64(time.Second))
	return v
}

// list reads f as a list of strings, each at f's position.
func list(f field) []infra.Value[string] {
	if !f.val.IsWhollyKnown() || f.val.IsNull() || !f.val.CanIterateElements() {
		return []infra.Value[string]{{State: infra.Unknown, Pos: f.pos, Ref: f.ref}}
	}
	var out []infra.Value[string]
	for it := f.val.ElementIterator(); it.Next(); {
		_, e := it.Element()
		out = append(out, str(field{val: e, set: true, pos: f.pos}, f.pos))
	}
	return out
}

// fromGo turns a decoded JSON value into a cty value (numbers as
// json.Number or float64).
func fromGo(v any) cty.Value {
	switch x := v.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType)
	case string:
		return cty.StringVal(x)
	case bool:
		return cty.BoolVal(x)
	case float64:
		return cty.NumberFloatVal(x)
	case json.Number:
		if n, err := cty.ParseNumberVal(x.String()); err == nil {
			return n
		}
		return cty.DynamicVal
	case []any:
		if len(x) == 0 {
			return cty.EmptyTupleVal
		}
		vs := make([]cty.Value, len(x))
		for i, e := range x {
			vs[i] = fromGo(e)
		}
		return cty.TupleVal(vs)
	case map[string]any:
		if len(x) == 0 {
			return cty.EmptyObjectVal
		}
		m := make(map[string]cty.Value, len(x))
		for k, e := range x {
			m[k] = fromGo(e)
		}
		return cty.ObjectVal(m)
	}
	return cty.DynamicVal
}

// jsonBody is the body of a JSON object decoded from a string: every key
// at the position of the attribute that holds the string.
type jsonBody struct {
	m   map[string]any
	pos config.Position
}

// decodeJSONObject decodes s as a JSON object; nil when it is not one.
func decodeJSONObject(s string, pos config.Position) *jsonBody {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil
	}
	return &jsonBody{m: m, pos: pos}
}

func (j *jsonBody) attr(name string) field {
	v, ok := j.m[name]
	if !ok {
		return field{}
	}
	return field{val: fromGo(v), set: true, pos: j.pos}
}

func (j *jsonBody) block(name string) (body, field) {
	if m, ok := j.m[name].(map[string]any); ok {
		return &jsonBody{m: m, pos: j.pos}, field{set: true, pos: j.pos, val: cty.EmptyObjectVal}
	}
	return nil, field{}
}

func (j *jsonBody) object(name string) (body, field) {
	f := j.attr(name)
	if !f.set {
		return nil, f
	}
	if s, ok := j.m[name].(string); ok {
		if ob := decodeJSONObject(s, j.pos); ob != nil {
			return ob, f
		}
	}
	if m, ok := j.m[name].(map[string]any); ok {
		return &jsonBody{m: m, pos: j.pos}, f
	}
	return nil, f
}

func (j *jsonBody) at() config.Position { return j.pos }

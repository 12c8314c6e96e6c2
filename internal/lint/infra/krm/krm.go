// Package krm reads Kubernetes manifests (multi-document YAML, and v1
// List objects as `kubectl get -o yaml` writes them) into the resources of
// `lint --infra`: Config Connector's PubSubSubscription and PubSubTopic
// (pubsub.cnrm.cloud.google.com) and ACK's SQS Queue
// (sqs.services.k8s.aws), with the settings a subscription runs on, at the
// positions they are written. Other objects are skipped.
//
// A resource's Address is "Kind/namespace/name", or "Kind/name" when the
// manifest leaves the namespace to kubectl. A Config Connector reference by
// name (spec.topicRef.name, deadLetterPolicy.deadLetterTopicRef.name)
// records the Address of the PubSubTopic it names in infra.Value.Ref; it is
// Known, the topic's id, when that topic is declared in the same file, and
// Unknown otherwise (the topic's resourceID may differ from its name) —
// except a dead-letter topic reference to a topic declared in no file of
// its own: that one is Known as the name it gives (the id Config Connector
// gives a PubSubTopic without resourceID), with Ref kept so that a
// declaration in another file given to --infra still wins, so that a
// dead-letter policy sending elsewhere than the subscriptions file says is
// reported rather than silently not judged. A reference by external name is
// Known as written. The project is the
// cnrm.cloud.google.com/project-id annotation, Unknown without it (Config
// Connector then reads the namespace's annotation).
//
// ACK writes every queue attribute as a string ("30", "true") and the
// redrive policies as JSON strings; both, and plain numbers and booleans,
// are read. A value's position is its key (a policy's values, inside a
// JSON string, are at the policy's key); an Unset value is at the object's
// first key.
//
// The file is parsed under the limits of a subscriptions file
// (config.ParseLimited, config.AliasBudget).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/..., internal/broker/gcp/...,
// internal/pump, github.com/spf13/cobra
package krm

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
	"github.com/brightergo/brighter/internal/lint/infra/yamldoc"
)

// The API groups and kinds the reader turns into infra resources.
const (
	// GroupConfigConnectorPubSub is Config Connector's Pub/Sub API group.
	GroupConfigConnectorPubSub = "pubsub.cnrm.cloud.google.com"
	// GroupACKSQS is the ACK SQS controller's API group.
	GroupACKSQS = "sqs.services.k8s.aws"

	// KindPubSubSubscription is read as infra.KindPubSubSubscription.
	KindPubSubSubscription = "PubSubSubscription"
	// KindPubSubTopic is read as infra.KindPubSubTopic.
	KindPubSubTopic = "PubSubTopic"
	// KindQueue (of GroupACKSQS) is read as infra.KindSQSQueue.
	KindQueue = "Queue"
)

// projectAnnotation is Config Connector's per-object project.
const projectAnnotation = "cnrm.cloud.google.com/project-id"

// Detect reports whether data is a Kubernetes manifest: at least one of its
// YAML documents is a mapping with string apiVersion and kind keys. A file
// the YAML parser refuses (or over the limits) is not one.
func Detect(data []byte) bool {
	f, err := yamldoc.Parse("", data)
	if err != nil {
		return false
	}
	for i, d := range f.Docs {
		ents, ok := f.Entries(i, d, "")
		if !ok {
			continue
		}
		if str(f, i, yamldoc.Find(ents, "apiVersion")) != "" && str(f, i, yamldoc.Find(ents, "kind")) != "" {
			return true
		}
	}
	return false
}

// Read reads the manifests in data (name is its path, used in positions)
// and returns their Pub/Sub subscriptions and topics and SQS queues in file
// order.
//
// Errors: a YAML syntax error, a limit exceeded, or a field of a read
// object with the wrong type (a number that is not one, a redrive policy
// that is not a JSON object) is returned as config.Errors with positions in
// name.
func Read(name string, data []byte) ([]infra.Resource, error) {
	f, err := yamldoc.Parse(name, data)
	if err != nil {
		return nil, err
	}
	r := &reader{f: f}
	for i, d := range f.Docs {
		r.doc = i
		r.object(d, "", 0)
	}
	r.resolveTopics()
	if err := f.Err(); err != nil {
		return nil, err
	}
	return r.out, nil
}

type reader struct {
	f   *yamldoc.File
	doc int
	out []infra.Resource
}

// object reads one manifest object (field is its path, "" for a document,
// "items[3]" in a List).
func (r *reader) object(n ast.Node, field string, depth int) {
	f := r.f
	ents, ok := f.Entries(r.doc, n, field)
	if !ok {
		return
	}
	apiVersion := str(f, r.doc, yamldoc.Find(ents, "apiVersion"))
	kind := str(f, r.doc, yamldoc.Find(ents, "kind"))
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	switch {
	case strings.HasSuffix(kind, "List") && depth == 0:
		if items := yamldoc.Find(ents, "items"); items != nil {
			list, _ := f.Items(r.doc, items.Val, items.Field)
			for i, it := range list {
				r.object(it, items.Field+"["+strconv.Itoa(i)+"]", depth+1)
			}
		}
	case group == GroupConfigConnectorPubSub && kind == KindPubSubSubscription:
		r.out = append(r.out, r.pubsubSubscription(n, ents))
	case group == GroupConfigConnectorPubSub && kind == KindPubSubTopic:
		r.out = append(r.out, r.pubsubTopic(n, ents))
	case group == GroupACKSQS && kind == KindQueue:
		r.out = append(r.out, r.queue(n, ents))
	}
}

// meta is an object's identity.
type meta struct {
	name, namespace string
	pos             config.Position
	nameValue       infra.Value[string]
	project         infra.Value[string]
	spec            []yamldoc.Entry
}

func (r *reader) meta(n ast.Node, ents []yamldoc.Entry) meta {
	f := r.f
	m := meta{pos: f.Pos(n)}
	m.nameValue = infra.Value[string]{State: infra.Unknown, Pos: m.pos}
	m.project = infra.Value[string]{State: infra.Unknown, Pos: m.pos}
	if md := yamldoc.Find(ents, "metadata"); md != nil {
		me, _ := f.Entries(r.doc, md.Val, md.Field)
		if e := yamldoc.Find(me, "name"); e != nil {
			m.nameValue = r.str(e)
			m.name = m.nameValue.V
		}
		m.namespace = str(f, r.doc, yamldoc.Find(me, "namespace"))
		if a := yamldoc.Find(me, "annotations"); a != nil {
			ae, _ := f.Entries(r.doc, a.Val, a.Field)
			if p := yamldoc.Find(ae, projectAnnotation); p != nil {
				m.project = r.str(p)
			}
		}
	}
	if s := yamldoc.Find(ents, "spec"); s != nil {
		m.spec, _ = f.Entries(r.doc, s.Val, s.Field)
	}
	return m
}

func (m meta) address(kind string) string { return address(kind, m.namespace, m.name) }

// address is the Address of the object of kind named name in namespace:
// "Kind/namespace/name", or "Kind/name" without a namespace.
func address(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// unsetAt returns a resource of kind with every setting Unset at p.
func unsetAt(kind infra.Kind, address string, p config.Position) infra.Resource {
	out := infra.Resource{Kind: kind, Address: address, Pos: p}
	for _, q := range []*config.Position{
		&out.Name.Pos, &out.ARN.Pos, &out.Project.Pos, &out.FIFO.Pos, &out.VisibilityTimeout.Pos,
		&out.MessageRetention.Pos, &out.MaxMessageSize.Pos, &out.TopicARN.Pos, &out.Protocol.Pos,
		&out.Endpoint.Pos, &out.RawMessageDelivery.Pos, &out.Topic.Pos, &out.AckDeadline.Pos,
		&out.Ordering.Pos, &out.ExactlyOnce.Pos, &out.RetryMinBackoff.Pos, &out.RetryMaxBackoff.Pos,
	} {
		*q = p
	}
	return out
}

// pubsubName is the Pub/Sub id: spec.resourceID, else metadata.name.
func (r *reader) pubsubName(m meta) infra.Value[string] {
	if e := yamldoc.Find(m.spec, "resourceID"); e != nil {
		return r.str(e)
	}
	return m.nameValue
}

func (r *reader) pubsubTopic(n ast.Node, ents []yamldoc.Entry) infra.Resource {
	m := r.meta(n, ents)
	t := unsetAt(infra.KindPubSubTopic, m.address(KindPubSubTopic), m.pos)
	t.Name = r.pubsubName(m)
	t.Project = m.project
	return t
}

func (r *reader) pubsubSubscription(n ast.Node, ents []yamldoc.Entry) infra.Resource {
	m := r.meta(n, ents)
	s := unsetAt(infra.KindPubSubSubscription, m.address(KindPubSubSubscription), m.pos)
	s.Name = r.pubsubName(m)
	s.Project = m.project
	if e := yamldoc.Find(m.spec, "topicRef"); e != nil {
		s.Topic = r.topicRef(e, m)
	}
	s.AckDeadline = seconds(r.integer(yamldoc.Find(m.spec, "ackDeadlineSeconds"), m.pos))
	s.Ordering = r.boolean(yamldoc.Find(m.spec, "enableMessageOrdering"), m.pos)
	s.ExactlyOnce = r.boolean(yamldoc.Find(m.spec, "enableExactlyOnceDelivery"), m.pos)
	s.MessageRetention = r.duration(yamldoc.Find(m.spec, "messageRetentionDuration"), m.pos)
	if e := yamldoc.Find(m.spec, "retryPolicy"); e != nil {
		s.RetryPolicy = true
		rp, _ := r.f.Entries(r.doc, e.Val, e.Field)
		s.RetryMinBackoff = r.duration(yamldoc.Find(rp, "minimumBackoff"), e.Pos)
		s.RetryMaxBackoff = r.duration(yamldoc.Find(rp, "maximumBackoff"), e.Pos)
	}
	if e := yamldoc.Find(m.spec, "deadLetterPolicy"); e != nil {
		dl, _ := r.f.Entries(r.doc, e.Val, e.Field)
		p := &infra.DeadLetterPolicy{Pos: e.Pos, Topic: infra.Value[string]{Pos: e.Pos}}
		if t := yamldoc.Find(dl, "deadLetterTopicRef"); t != nil {
			p.Topic = r.topicRef(t, m)
		}
		p.MaxDeliveryAttempts = r.integer(yamldoc.Find(dl, "maxDeliveryAttempts"), e.Pos)
		s.DeadLetter = p
	}
	return s
}

// topicRef reads a Config Connector resource reference to a topic:
// {external: NAME} or {name: NAME, namespace: NS}.
func (r *reader) topicRef(e *yamldoc.Entry, m meta) infra.Value[string] {
	ref, ok := r.f.Entries(r.doc, e.Val, e.Field)
	if !ok {
		return infra.Value[string]{State: infra.Unknown, Pos: e.Pos}
	}
	if x := yamldoc.Find(ref, "external"); x != nil {
		v := r.str(x)
		v.Pos = e.Pos
		return v
	}
	name := str(r.f, r.doc, yamldoc.Find(ref, "name"))
	if name == "" {
		r.f.ErrorAt(e.Pos, e.Field, "a topic reference needs name or external")
		return infra.Value[string]{State: infra.Unknown, Pos: e.Pos}
	}
	ns := str(r.f, r.doc, yamldoc.Find(ref, "namespace"))
	if ns == "" {
		ns = m.namespace
	}
	return infra.Value[string]{State: infra.Unknown, Pos: e.Pos, Ref: address(KindPubSubTopic, ns, name)}
}

// resolveTopics makes Known each topic reference to a topic of the same
// file whose id the file fixes, and each dead-letter topic reference to a
// topic the file does not declare as the name it gives (Ref kept: a
// declaration in another file wins).
func (r *reader) resolveTopics() {
	ids := map[string]infra.Value[string]{}
	for _, res := range r.out {
		if res.Kind == infra.KindPubSubTopic {
			ids[res.Address] = res.Name
		}
	}
	fix := func(v *infra.Value[string]) {
		if t, ok := ids[v.Ref]; ok && v.State == infra.Unknown && t.State == infra.Known {
			v.V, v.State, v.Ref = t.V, infra.Known, ""
		}
	}
	for i := range r.out {
		fix(&r.out[i].Topic)
		if r.out[i].DeadLetter != nil {
			dl := &r.out[i].DeadLetter.Topic
			fix(dl)
			if _, declared := ids[dl.Ref]; dl.Ref != "" && dl.State == infra.Unknown && !declared {
				// The Ref is an address: its last segment is the name.
				dl.V, dl.State = dl.Ref[strings.LastIndex(dl.Ref, "/")+1:], infra.Known
			}
		}
	}
}

func (r *reader) queue(n ast.Node, ents []yamldoc.Entry) infra.Resource {
	m := r.meta(n, ents)
	addr := m.address(KindQueue)
	q := unsetAt(infra.KindSQSQueue, addr, m.pos)
	q.Name = infra.Value[string]{State: infra.Unknown, Pos: m.pos}
	if e := yamldoc.Find(m.spec, "queueName"); e != nil {
		q.Name = r.str(e)
	}
	q.ARN = infra.Value[string]{State: infra.Unknown, Pos: m.pos}
	if st := yamldoc.Find(ents, "status"); st != nil {
		se, _ := r.f.Entries(r.doc, st.Val, st.Field)
		if md := yamldoc.Find(se, "ackResourceMetadata"); md != nil {
			me, _ := r.f.Entries(r.doc, md.Val, md.Field)
			if a := yamldoc.Find(me, "arn"); a != nil {
				q.ARN = r.str(a)
			}
		}
	}
	q.FIFO = r.boolean(yamldoc.Find(m.spec, "fifoQueue"), m.pos)
	q.VisibilityTimeout = seconds(r.integer(yamldoc.Find(m.spec, "visibilityTimeout"), m.pos))
	q.MessageRetention = seconds(r.integer(yamldoc.Find(m.spec, "messageRetentionPeriod"), m.pos))
	q.MaxMessageSize = r.integer(yamldoc.Find(m.spec, "maximumMessageSize"), m.pos)
	if e := yamldoc.Find(m.spec, "redrivePolicy"); e != nil {
		if obj, ok := r.jsonObject(e); ok {
			q.Redrive = &infra.Redrive{Pos: e.Pos,
				TargetARN:       r.jsonString(obj, "deadLetterTargetArn", e),
				MaxReceiveCount: r.jsonInt(obj, "maxReceiveCount", e)}
		}
	}
	if e := yamldoc.Find(m.spec, "redriveAllowPolicy"); e != nil {
		if obj, ok := r.jsonObject(e); ok {
			a := &infra.RedriveAllow{Pos: e.Pos, Permission: r.jsonString(obj, "redrivePermission", e)}
			list, _ := obj["sourceQueueArns"].([]any)
			for _, s := range list {
				v := infra.Value[string]{Pos: e.Pos, State: infra.Known}
				v.V, _ = s.(string)
				a.SourceARNs = append(a.SourceARNs, v)
			}
			q.RedriveAllow = a
		}
	}
	return q
}

// jsonObject reads e's value, a string holding a JSON object (or a YAML
// mapping written in its place).
func (r *reader) jsonObject(e *yamldoc.Entry) (map[string]any, bool) {
	_, v, ok := r.f.Untag(r.doc, e.Val, e.Field)
	if !ok {
		return nil, false
	}
	var text string
	switch s, kind := yamldoc.Scalar(v); kind {
	case yamldoc.String:
		text = s
	case yamldoc.Null:
		return nil, false
	default:
		r.f.Errorf(v, e.Field, "must be a JSON object in a string, got %s", yamldoc.KindOf(v))
		return nil, false
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		r.f.ErrorAt(e.Pos, e.Field, "must be a JSON object: %v", err)
		return nil, false
	}
	return obj, true
}

func (r *reader) jsonString(obj map[string]any, key string, e *yamldoc.Entry) infra.Value[string] {
	v, ok := obj[key]
	if !ok {
		return infra.Value[string]{Pos: e.Pos}
	}
	s, isStr := v.(string)
	if !isStr {
		r.f.ErrorAt(e.Pos, e.Field+"."+key, "must be a string, got %v", v)
		return infra.Value[string]{Pos: e.Pos, State: infra.Unknown}
	}
	return infra.Value[string]{V: s, State: infra.Known, Pos: e.Pos}
}

func (r *reader) jsonInt(obj map[string]any, key string, e *yamldoc.Entry) infra.Value[int] {
	v, ok := obj[key]
	if !ok {
		return infra.Value[int]{Pos: e.Pos}
	}
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case float64:
		text = strconv.FormatFloat(x, 'f', -1, 64)
	}
	n, err := strconv.Atoi(text)
	if err != nil {
		r.f.ErrorAt(e.Pos, e.Field+"."+key, "must be a whole number, got %v", v)
		return infra.Value[int]{Pos: e.Pos, State: infra.Unknown}
	}
	return infra.Value[int]{V: n, State: infra.Known, Pos: e.Pos}
}

// str returns e's value as text when it is a scalar, "" otherwise.
func str(f *yamldoc.File, doc int, e *yamldoc.Entry) string {
	if e == nil {
		return ""
	}
	_, v, ok := f.Untag(doc, e.Val, e.Field)
	if !ok {
		return ""
	}
	s, kind := yamldoc.Scalar(v)
	if kind == yamldoc.NotScalar {
		return ""
	}
	return s
}

// scalar reads e's value as a scalar at e's key: Unset when null.
func (r *reader) scalar(e *yamldoc.Entry) (string, infra.State) {
	_, v, ok := r.f.Untag(r.doc, e.Val, e.Field)
	if !ok {
		return "", infra.Unknown
	}
	s, kind := yamldoc.Scalar(v)
	switch kind {
	case yamldoc.NotScalar:
		r.f.Errorf(v, e.Field, "must be a single value, got %s", yamldoc.KindOf(v))
		return "", infra.Unknown
	case yamldoc.Null:
		return "", infra.Unset
	}
	return s, infra.Known
}

func (r *reader) str(e *yamldoc.Entry) infra.Value[string] {
	s, st := r.scalar(e)
	return infra.Value[string]{V: s, State: st, Pos: e.Pos}
}

// integer reads e (nil: Unset at unset) as a whole number, written as a
// number or a string.
func (r *reader) integer(e *yamldoc.Entry, unset config.Position) infra.Value[int] {
	if e == nil {
		return infra.Value[int]{Pos: unset}
	}
	s, st := r.scalar(e)
	out := infra.Value[int]{State: st, Pos: e.Pos}
	if st == infra.Known {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			r.f.ErrorAt(e.Pos, e.Field, "must be a whole number, got %q", s)
			out.State = infra.Unknown
		}
		out.V = n
	}
	return out
}

func (r *reader) boolean(e *yamldoc.Entry, unset config.Position) infra.Value[bool] {
	if e == nil {
		return infra.Value[bool]{Pos: unset}
	}
	s, st := r.scalar(e)
	out := infra.Value[bool]{State: st, Pos: e.Pos}
	if st == infra.Known {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			out.V = true
		case "false":
		default:
			r.f.ErrorAt(e.Pos, e.Field, "must be true or false, got %q", s)
			out.State = infra.Unknown
		}
	}
	return out
}

// duration reads e as a Google duration ("600s", "3.5s").
func (r *reader) duration(e *yamldoc.Entry, unset config.Position) infra.Value[time.Duration] {
	if e == nil {
		return infra.Value[time.Duration]{Pos: unset}
	}
	s, st := r.scalar(e)
	out := infra.Value[time.Duration]{State: st, Pos: e.Pos}
	if st == infra.Known {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || !strings.HasSuffix(strings.TrimSpace(s), "s") {
			r.f.ErrorAt(e.Pos, e.Field, "must be a duration in seconds such as \"600s\", got %q", s)
			out.State = infra.Unknown
		}
		out.V = d
	}
	return out
}

func seconds(n infra.Value[int]) infra.Value[time.Duration] {
	return infra.Value[time.Duration]{V: time.Duration(n.V) * time.Second, State: n.State, Pos: n.Pos, Ref: n.Ref}
}

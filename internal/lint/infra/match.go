package infra

import "strings"

// ShortName returns the name in an ARN ("arn:aws:sqs:eu-west-1:1234:orders"
// gives "orders") or a full resource name ("projects/p/topics/orders"
// gives "orders"); any other name as it is.
func ShortName(name string) string {
	if strings.HasPrefix(name, "arn:") {
		return name[strings.LastIndexByte(name, ':')+1:]
	}
	if strings.HasPrefix(name, "projects/") {
		return name[strings.LastIndexByte(name, '/')+1:]
	}
	return name
}

// projectOf returns the project of a full resource name
// ("projects/p/topics/t" gives "p"), or "".
func projectOf(name string) string {
	rest, ok := strings.CutPrefix(name, "projects/")
	if !ok {
		return ""
	}
	p, _, _ := strings.Cut(rest, "/")
	return p
}

// ByAddress returns the resource declared at addr (Resource.Address).
func (s *Set) ByAddress(addr string) (*Resource, bool) {
	for i := range s.Resources {
		if s.Resources[i].Address == addr {
			return &s.Resources[i], true
		}
	}
	return nil, false
}

// named reports whether r's deployed name is name (a short name, an ARN or
// a full resource name), matching the ARN when the file fixes it and the
// project when both sides name one.
func (r *Resource) named(name string) bool {
	if r.ARN.IsKnown() && strings.HasPrefix(name, "arn:") {
		return r.ARN.V == name
	}
	if !r.Name.IsKnown() || ShortName(r.Name.V) != ShortName(name) {
		return false
	}
	if p := projectOf(name); p != "" {
		rp := r.Project.V
		if !r.Project.IsKnown() {
			rp = projectOf(r.Name.V)
		}
		return rp == "" || rp == p
	}
	return true
}

// Find returns the first resource of kind whose name is name (a short
// name, an ARN or a full resource name "projects/P/subscriptions/ID").
func (s *Set) Find(kind Kind, name string) (*Resource, bool) {
	for i := range s.Resources {
		if r := &s.Resources[i]; r.Kind == kind && r.named(name) {
			return r, true
		}
	}
	return nil, false
}

// Resolve returns the resource of kind that v names: by its Ref when v
// refers to another declaration, by name or ARN when v is Known. ok is
// false when v is Unset, Unknown without a Ref, or names nothing declared.
func (s *Set) Resolve(kind Kind, v Value[string]) (*Resource, bool) {
	switch {
	case v.Ref != "":
		r, ok := s.ByAddress(v.Ref)
		return r, ok && r.Kind == kind
	case v.IsKnown():
		return s.Find(kind, v.V)
	}
	return nil, false
}

// SubscriptionsOf returns the Pub/Sub subscriptions declared on topic (by
// reference or by name).
func (s *Set) SubscriptionsOf(topic *Resource) []*Resource {
	var out []*Resource
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Kind != KindPubSubSubscription {
			continue
		}
		if t, ok := s.Resolve(KindPubSubTopic, r.Topic); ok && t == topic {
			out = append(out, r)
		}
	}
	return out
}

// Reads reports whether a declared Pub/Sub subscription reads the topic
// declared as topic (nil when the files do not declare it) or named name
// (an id or full resource name): one whose topic refers to that
// declaration or is written with that name. decided is false when no
// subscription reads it but one names its topic only at apply time, so
// that it may be this one.
func (s *Set) Reads(topic *Resource, name string) (read, decided bool) {
	decided = true
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Kind != KindPubSubSubscription {
			continue
		}
		t, ok := s.Resolve(KindPubSubTopic, r.Topic)
		switch {
		case ok && topic != nil:
			if t == topic {
				return true, true
			}
		case ok && t.Name.IsKnown():
			if ShortName(t.Name.V) == ShortName(name) {
				return true, true
			}
		case r.Topic.IsKnown():
			if ShortName(r.Topic.V) == ShortName(name) || topic != nil && topic.named(r.Topic.V) {
				return true, true
			}
		case r.Topic.State == Unknown || ok:
			decided = false
		}
	}
	return false, decided
}

// SNSSubscriptionsTo returns the SNS subscriptions whose endpoint is queue
// (by reference or by ARN).
func (s *Set) SNSSubscriptionsTo(queue *Resource) []*Resource {
	var out []*Resource
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Kind != KindSNSSubscription {
			continue
		}
		if q, ok := s.Resolve(KindSQSQueue, r.Endpoint); ok && q == queue {
			out = append(out, r)
		}
	}
	return out
}

// Attach gives each queue the redrive and redrive allow policies declared
// apart from it (KindSQSQueuePolicy) that name it by reference or URL,
// unless it declares its own. Load calls it once every file is read.
func (s *Set) Attach() {
	for i := range s.Resources {
		p := s.Resources[i]
		if p.Kind != KindSQSQueuePolicy {
			continue
		}
		var q *Resource
		switch {
		case p.Queue.Ref != "":
			q, _ = s.ByAddress(p.Queue.Ref)
		case p.Queue.IsKnown():
			q, _ = s.Find(KindSQSQueue, p.Queue.V[strings.LastIndexByte(p.Queue.V, '/')+1:])
		}
		if q == nil || q.Kind != KindSQSQueue {
			continue
		}
		if q.Redrive == nil && p.Redrive != nil {
			q.Redrive = p.Redrive
		}
		if q.RedriveAllow == nil && p.RedriveAllow != nil {
			q.RedriveAllow = p.RedriveAllow
		}
	}
}

package observe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxRecordBytes bounds one /events line.
const maxRecordBytes = 1 << 20

// ReadEvents reads /events NDJSON from r and calls fn for each record, in
// order, until r ends (nil) or fails (the error, wrapped). Blank lines
// (keep-alives) are skipped; a line that is not a record is an error.
func ReadEvents(r io.Reader, fn func(Record)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxRecordBytes)
	// One decode target for the whole stream (fn receives a copy): zeroed
	// before each line so no pointer or map is shared between two records.
	rec := new(Record)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		*rec = Record{}
		if err := json.Unmarshal(line, rec); err != nil {
			return fmt.Errorf("read events: bad record %.80q: %w", line, err)
		}
		fn(*rec)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	return nil
}

// Totals are one subscription's counters as /metrics reports them.
type Totals struct {
	Received, Acknowledged, Deferred, Rejected, BudgetExhausted, RoutingFailures float64
	InFlight                                                                     float64
	// DLQDepth is brighter_dlq_depth; HasDLQDepth says whether it was
	// reported.
	DLQDepth    float64
	HasDLQDepth bool
}

// ParseTotals reads a /metrics text exposition and returns the totals per
// subscription. It returns an error (wrapped) for text that does not parse.
func ParseTotals(r io.Reader) (map[string]Totals, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	out := map[string]Totals{}
	add := func(name string, set func(t *Totals, v float64)) {
		f, ok := fams[name]
		if !ok {
			return
		}
		for _, m := range f.GetMetric() {
			sub := label(m, "subscription")
			t := out[sub]
			set(&t, value(m))
			out[sub] = t
		}
	}
	add(MetricReceived, func(t *Totals, v float64) { t.Received += v })
	add(MetricAcknowledged, func(t *Totals, v float64) { t.Acknowledged += v })
	add(MetricDeferred, func(t *Totals, v float64) { t.Deferred += v })
	add(MetricRejected, func(t *Totals, v float64) { t.Rejected += v })
	add(MetricBudgetExhausted, func(t *Totals, v float64) { t.BudgetExhausted += v })
	add(MetricRoutingFailures, func(t *Totals, v float64) { t.RoutingFailures += v })
	add(MetricInFlight, func(t *Totals, v float64) { t.InFlight += v })
	add(MetricDLQDepth, func(t *Totals, v float64) { t.DLQDepth += v; t.HasDLQDepth = true })
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

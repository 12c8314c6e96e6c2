package main

// pullHealthMutants break the rule that readiness tells the truth on a
// Pub/Sub subscription whose service stops answering while the
// subscription is idle: a Pull cut off by its own deadline, or a stream
// silent for StreamProbeAfter, is confirmed with one probe, and an
// unanswered probe is a channel failure; a healthy idle subscription makes
// no probe it does not need. No conformance row black-holes a connection,
// so the gcp package's readiness tests kill them.
var pullHealthMutants = []mutant{
	{Name: "pubsub-pull-cutoff-unprobed", What: "a Pub/Sub Pull cut off by its own deadline reads as nothing arrived without a probe: a black-holed pull subscription stays ready for ever",
		File: "internal/broker/gcp/pull.go",
		Old:  "if perr := probeService(ctx, c.client, c.sub); perr != nil {",
		New:  "if perr := error(nil); perr != nil {",
		Run:  "^TestBlackHoledPullSubscriptionTurnsNotReadyWithinTheBound$", Pkg: "./internal/broker/gcp"},
	{Name: "pubsub-pull-probe-twice", What: "a Pub/Sub Pull cut off by its own deadline is confirmed with two probes instead of one",
		File: "internal/broker/gcp/pull.go",
		Old:  "if perr := probeService(ctx, c.client, c.sub); perr != nil {",
		New:  "if perr := errors.Join(probeService(ctx, c.client, c.sub), probeService(ctx, c.client, c.sub)); perr != nil {",
		Run:  "^TestPullsHeldToTheirDeadlineCostOneProbeEach$", Pkg: "./internal/broker/gcp"},
	{Name: "pubsub-pull-probe-every-pull", What: "every Pub/Sub Pull is followed by a probe, also one the service answered: an idle healthy subscription doubles its calls",
		File: "internal/broker/gcp/pull.go",
		Old:  "\tout := make([]*message.Message, 0, len(resp.ReceivedMessages))\n",
		New:  "\t_ = probeService(ctx, c.client, c.sub)\n\tout := make([]*message.Message, 0, len(resp.ReceivedMessages))\n",
		Run:  "^TestIdlePullSubscriptionStaysReadyWithoutProbes$", Pkg: "./internal/broker/gcp"},
	{Name: "pubsub-probe-refusal-unanswered", What: "a probe the service refuses (PermissionDenied, NotFound) counts as unanswered: a credential that may consume but not read the subscription turns every idle Pull into a channel failure",
		File: "internal/broker/gcp/consumer.go",
		Old:  "if err == nil || pctx.Err() == nil && answered(err) {",
		New:  "if err == nil {",
		Run:  "^TestProbeRefusalCountsAsAnAnswer$", Pkg: "./internal/broker/gcp"},
	{Name: "pubsub-stream-unprobed", What: "a silent Pub/Sub stream is never probed: a black-holed streaming subscription stays ready for ever",
		File: "internal/broker/gcp/stream.go",
		Old:  "\tif time.Since(time.Unix(0, c.heard.Load())) < StreamProbeAfter {",
		New:  "\tif true {",
		Run:  "^TestBlackHoledStreamSubscriptionTurnsNotReadyWithinTheBound$", Pkg: "./internal/broker/gcp"},
	{Name: "pubsub-stream-probe-every-receive", What: "a Pub/Sub stream consumer probes on every empty Receive, not once per StreamProbeAfter of silence",
		File: "internal/broker/gcp/stream.go",
		Old:  "\tif time.Since(time.Unix(0, c.heard.Load())) < StreamProbeAfter {",
		New:  "\tif false {",
		Run:  "^TestIdleStreamSubscriptionStaysReadyWithOneProbePerInterval$", Pkg: "./internal/broker/gcp"},
}

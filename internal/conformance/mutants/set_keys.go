package main

// keysMutants break the ordered-key rules under deferral
// (docs/adr/0006-ordered-channels-under-deferral.md) on the ways a message
// goes back unsettled that a deferral does not take, and the receipt a
// settle uses once the broker handed a message out more than once while the
// run held it (docs/adr/0005-leases.md decision 9), and how one extension
// call bounds and refuses leases. Each is the pump's own bookkeeping, so
// pump tests over the memory transport kill it; the lapsed lease's hold is
// also killed by the conformance row R-29/lapse-hold on a real ordered
// broker.
var keysMutants = []mutant{
	{Name: "ordered-lapse-no-hold", What: "a keyed message whose lease lapsed before dispatch (the broker hands it out again) does not hold back its key: a later message of the key received with it is handled first",
		File: "internal/pump/settle.go",
		Old:  "r.holds.hold(m, now, 0) // it comes back: the later messages of its key wait for it",
		New:  "// it comes back: the later messages of its key wait for it",
		// The pump test (both variants) and the R-29/lapse-hold cell of
		// SqsFifo's Proactor: one -run pattern over both packages, its
		// levels matching the pump test's variant subtests and the
		// conformance cell's path.
		Pkg: "./internal/pump ./internal/conformance",
		Run: "^(TestLapsedLeaseHoldsBackItsKey|" + sqsStd + ")$/^(reactor|proactor|SqsFifo)$/^proactor$/^(R29_lapsehold)$"},
	{Name: "ordered-holdback-no-remark", What: "a held-back release does not mark its key again: a message of the key that arrived after the earlier message's deferral but before the held-back release overtakes the held-back one",
		File: "internal/pump/order.go",
		Old:  "\tr.holds.hold(m, before, delay)\n",
		New:  "\t_ = before\n",
		Pkg:  "./internal/pump", Run: "^TestHeldBackReleaseMarksItsKeyAgain$"},
	{Name: "ordered-routed-ack-failed-gone", What: "a routed rejection whose acknowledgement failed counts as gone from the broker: its key is not held back though the original comes back",
		File: "internal/pump/settle.go",
		Old:  "return settleEnd{gone: res.Err == nil && !res.Released, delay: res.ReleaseDelay}",
		New:  "return settleEnd{gone: !res.Released, delay: res.ReleaseDelay}",
		Pkg:  "./internal/pump", Run: "^TestRoutedRejectionWhoseAcknowledgementFailedHoldsBackItsKey$"},
	{Name: "ordered-holdback-first-receipt", What: "a held-back release uses the message's first receipt, not the freshest: the broker refuses it and the message stays invisible until its lease lapses",
		File: "internal/pump/order.go",
		Old:  "m.Receipt = f.Receipt // the freshest receipt",
		New:  "_ = f.Receipt",
		Pkg:  "./internal/pump", Run: "^TestHeldBackReleaseUsesTheFreshestReceipt$"},
	{Name: "lapsed-settle-oldest-later-receipt", What: "a settle after the lease lapsed takes the oldest later delivery's receipt still waiting in the run, not the newest: the broker refuses it and the message is handled again",
		File: "internal/pump/redelivery.go",
		Old:  "d.word(leaseEnded)) && fresher == nil {",
		New:  "d.word(leaseEnded)) {",
		Pkg:  "./internal/pump", Run: "^TestLapsedSettleUsesTheNewestOfSeveralLaterDeliveries$"},
	{Name: "exhausted-first-receipt", What: "a message routed on arrival with its budget spent settles with its first receipt, not the freshest: the acknowledgement of the routed original is refused and it is routed again",
		File: "internal/pump/settle.go",
		Old:  "\t\tf, late, until := r.leases.settling(m, st, now, true)\n\t\tif f != nil {\n\t\t\tm.Receipt = f.Receipt\n\t\t}\n\t\tend := r.rejectExhausted(m, why)",
		New:  "\t\t_, late, until := r.leases.settling(m, st, now, true)\n\t\tend := r.rejectExhausted(m, why)",
		Pkg:  "./internal/pump", Run: "^TestExhaustedArrivalSettlesWithTheFreshestReceipt$"},
	{Name: "stale-extension-dispatchable", What: "an extension the broker refuses as stale leaves the message's lease as it was: the message is dispatched though the broker no longer holds it for this run",
		File: "internal/pump/lease_schedule.go",
		Old:  "\t\t\tl.setExpires(ref.b, st, start)\n",
		New:  "",
		Pkg:  "./internal/pump", Run: "^TestStaleExtensionRefusalIsNeverDispatched$"},
	{Name: "batch-extension-longest", What: "one extension call for several messages uses the longest extension any may have, not the shortest: a message near its cap is extended past first lease plus maxLeaseExtension",
		File: "internal/pump/lease_schedule.go",
		Old:  "if d == 0 || ext < d {",
		New:  "if d == 0 || ext > d {",
		Pkg:  "./internal/pump", Run: "^TestBatchExtensionNeverPassesAMessagesCap$"},
	// The key-hold rows are selected by the end of their cell names, which
	// stays when a row's id is renamed.
	{Name: "fifo-batcher-unwired", What: "the SQS FIFO conformance channels bypass the FIFOBatcher: fauxqs returns one message of a group per receive, so no later message of a key arrives with one held back and the ordered rows would pass without taking the path they prove",
		File: "internal/conformance/sqs_test.go",
		Old:  "\tif s.FIFOBatches && f.fifo {\n",
		New:  "\tif s.FIFOBatches && f.fifo && false {\n",
		Run:  sqsStd + "/SqsFifo/reactor/_(ackhold|lapsehold)$"},
}

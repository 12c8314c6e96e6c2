package main

// staleMutants are issue 34's: the receipt a settle uses once a message's
// lease lapsed while the run held it.
var staleMutants = []mutant{
	{Name: "stale-fresher-unused", What: "a settle after the lease lapsed uses its own, superseded receipt, not the later delivery's",
		File: "internal/pump/pump.go",
		Old:  "\tf, late := r.leases.settling(m, st, start.Add(took), final)\n\tif f != nil {",
		New:  "\tf, late := r.leases.settling(m, st, start.Add(took), final)\n\tif f != nil && false {",
		Run:  cells(sqsStd, "SqsStandard/proactor", "I341")},
	{Name: "stale-late-settle-forgotten", What: "a later delivery handed out during a late settle is handled again, and the superseded settle goes unreported",
		File: "internal/pump/redelivery.go",
		Old:  "if e.id == id && (e.refused || e.at > started) {",
		New:  "if false && e.id == id && (e.refused || e.at > started) {",
		Run:  cells(sqsStd, "SqsStandard/reactor", "I342")},
}

package main

// orderingMutants are issue 28's ordered-channel mutants: a message of a
// partition key released unsettled holds back the key's messages that
// arrived before.
var orderingMutants = []mutant{
	{Name: "ordered-no-holdback", What: "a later message of a partition key, received with one that was deferred, is handled at once instead of released unhandled",
		File: "internal/pump/pump.go",
		Old:  "if held, delay := r.holds.heldBack(m, now); held {",
		New:  "if held, delay := r.holds.heldBack(m, now); held && false {",
		Run:  cells(sqsStd, "SqsFifo/proactor", "I282")},
}

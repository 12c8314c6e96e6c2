package main

// exhaustedMutants are issue 28's "exhausted is final" mutants: a delivery
// whose count has already reached the budget goes to routing, never to the
// handler.
var exhaustedMutants = []mutant{
	{Name: "exhausted-handled-again", What: "a delivery that arrives with its budget spent (an earlier routing failed) is handed to the handler again instead of straight to routing",
		File: "internal/pump/pump.go",
		Old:  "\tif r.exhausted(m) {\n",
		New:  "\tif false && r.exhausted(m) {\n",
		Run:  cells(sqsStd, "SqsStandard/reactor", "I281")},
}

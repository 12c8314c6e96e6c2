package main

// userDefectMutants: what a new user trying the README met: a memory://
// file path holding "+", lint --live on a silent SQS endpoint, and dlq
// commands that ignored a signal while connecting.
var userDefectMutants = []mutant{
	{Name: "memory-file-plus-as-space", What: "a \"+\" in memory://QUEUE?file=PATH is decoded as a space, so dlq reads (or creates) another file than the one named",
		File: "internal/broker/memory/address.go",
		Old:  "\t\tvalue, err := url.PathUnescape(v)\n",
		New:  "\t\tvalue, err := url.QueryUnescape(v)\n",
		Run:  "^TestScripts$/^dlq_memory_file_path$", Pkg: "./internal/cmd/root"},
}

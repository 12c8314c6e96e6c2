package main

// pubsubDecodeMutants break what keeps the Pub/Sub decode cheap without
// changing what it reads: the header names left out of the bag are matched
// case-insensitively without an allocation.
var pubsubDecodeMutants = []mutant{
	{Name: "pubsub-reserved-case-sensitive", What: "the Pub/Sub decode's allocation-free match of header names stops folding ASCII case: an attribute named TOPIC or receipthandle lands in the bag",
		File: "internal/broker/gcp/codec.go",
		Old:  "\t\t\t\tc += 'a' - 'A'\n",
		New:  "",
		Pkg:  "./internal/broker/gcp", Run: "^TestDecodeBagHoldsEveryAttributeButTheHeaderNamesInAnyCase$"},
}

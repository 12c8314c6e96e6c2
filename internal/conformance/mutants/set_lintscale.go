package main

// lintScaleMutants break what lets lint and the decoder take a large honest
// subscriptions file: the index that finds the consumes-rejection-destination
// pairs in one pass, and the limits that replaced the 256 KiB size cap (a
// cap that refuses 10,000 subscriptions; aliases charged one node whatever
// they bring in), and the position tables that point each finding at its
// key. No message flows through any of them, so internal/lint's and
// internal/config's tests kill them.
var lintScaleMutants = []mutant{
	{Name: "lint-index-keeps-one-sender", What: "the rejection index keeps only the last subscription sending to a destination, so consumes-rejection-destination misses the others' pairs",
		File: "internal/lint/pairs.go",
		Old:  "m[k] = append(m[k], rejectionSource{src: src, d: d})",
		New:  "m[k] = []rejectionSource{{src: src, d: d}}",
		Run:  "^TestRejectionIndexFindsEveryPairwiseMatch$", Pkg: "./internal/lint"},
	{Name: "config-cap-refuses-honest-10k", What: "the decoder refuses a subscriptions file over 256 KiB again, so a 10,000-subscription file cannot be linted or consumed",
		File: "internal/config/limits.go",
		Old:  "MaxFileSize = 16 << 20",
		New:  "MaxFileSize = 256 << 10",
		Run:  "^TestTenThousandSubscriptionsDecode$", Pkg: "./internal/config"},
	{Name: "config-alias-cost-one", What: "an alias or merge key costs one node whatever it brings in, so aliasing a subscription with a 2,000-entry env a thousand times decodes two million entries",
		File: "internal/config/treenode.go",
		Old:  "\t\tcost = c\n",
		New:  "\t\tcost = min(c, 1)\n",
		Run:  "^TestHostileFilesGetClearErrors$", Pkg: "./internal/config"},
	{Name: "config-file-pos-skips-subscription", What: "File.Pos of a key under a subscription answers with the subscription's own position, now that a subscription's keys are kept in its table only",
		File: "internal/config/positions.go",
		Old:  "\t\treturn s.Pos(rel)\n",
		New:  "\t\treturn s.Pos(rel[:0])\n",
		Run:  "^TestSubscriptionPos_KeepsKeyPositionsWithFallbacks$", Pkg: "./internal/config"},
	{Name: "config-subscription-keys-in-file-table", What: "the keys under a subscription are recorded in the file's position table and not the subscription's, so every finding points at the subscription's first key",
		File: "internal/config/yamltree.go",
		Old:  "\tif d.sub != nil && strings.HasPrefix(path, d.subBase) {\n",
		New:  "\tif false && d.sub != nil && strings.HasPrefix(path, d.subBase) {\n",
		Run:  "^TestSubscriptionPos_KeepsKeyPositionsWithFallbacks$", Pkg: "./internal/config"},
}
